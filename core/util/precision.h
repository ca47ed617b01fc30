#pragma once
// The precision a run computes in (training.precision, --precision). bf16 is mixed precision in
// the usual sense: parameters, gradients, optimiser state, the size terms, the rank vectors' own
// values and the loss stay float32; the forward pass's matmuls and activations run in bfloat16
// (LibTorch's CPU autocast plus comera's own layers, which cast their parameters as they use
// them). The backward follows the forward's dtypes, and the casts hand float32 gradients to the
// parameters.
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <string>

namespace comera {

enum class Precision { Fp32, Bf16 };

const char* precision_name(Precision p);
// "fp32" or "bf16"; anything else throws comera::Error naming `where` and the choices.
Precision parse_precision(const std::string& text, const std::string& where);
// Throws comera::Error when `device` cannot compute in `p` here (bf16 is CPU-only so far).
void require_precision(Precision p, const c10::Device& device, const std::string& where);

// The forward pass of a scope in `p` on this thread's CPU ops (autocast on for bf16, off for
// fp32), the previous state restored on exit. Autocast's cached weight casts live until the
// outermost scope ends. Where p is allowed is require_precision's to check, before any work.
class ForwardPrecision {
 public:
  explicit ForwardPrecision(Precision p);
  ~ForwardPrecision();
  ForwardPrecision(const ForwardPrecision&) = delete;
  ForwardPrecision& operator=(const ForwardPrecision&) = delete;

 private:
  bool previous_;
  c10::ScalarType previous_dtype_;
};

// Whether a forward in lower precision is running on this thread for tensors on `device`.
bool lower_precision_forward(const c10::Device& device);
// A float32 parameter or activation as the current forward computes with it: bfloat16 inside a
// bf16 ForwardPrecision (a differentiable cast: the gradient reaches `t` in float32, and a leaf
// parameter is cast once per scope), else `t` itself. Other dtypes pass through.
at::Tensor compute_cast(const at::Tensor& t);
// A bf16 activation or loss as float32 (a differentiable cast), else `t` itself: for the float32
// parts of a bf16 forward (layer norms, the losses).
at::Tensor float_activation(const at::Tensor& t);

}  // namespace comera
