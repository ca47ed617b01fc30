#include "core/util/precision.h"

#include "core/util/error.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace comera {

namespace {
// LibTorch 2.4 keys autocast's state by device type and deprecates the per-device spellings
// (each call then warns); 1.13 has only those.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool cpu_autocast() { return at::autocast::is_autocast_enabled(at::kCPU); }
void set_cpu_autocast(bool on) { at::autocast::set_autocast_enabled(at::kCPU, on); }
at::ScalarType cpu_autocast_dtype() { return at::autocast::get_autocast_dtype(at::kCPU); }
void set_cpu_autocast_dtype(at::ScalarType t) { at::autocast::set_autocast_dtype(at::kCPU, t); }
#else
bool cpu_autocast() { return at::autocast::is_cpu_enabled(); }
void set_cpu_autocast(bool on) { at::autocast::set_cpu_enabled(on); }
at::ScalarType cpu_autocast_dtype() { return at::autocast::get_autocast_cpu_dtype(); }
void set_cpu_autocast_dtype(at::ScalarType t) { at::autocast::set_autocast_cpu_dtype(t); }
#endif
}  // namespace

const char* precision_name(Precision p) { return p == Precision::Bf16 ? "bf16" : "fp32"; }

Precision parse_precision(const std::string& text, const std::string& where) {
  if (text == "fp32") return Precision::Fp32;
  if (text == "bf16") return Precision::Bf16;
  throw Error(where + ": unknown precision '" + text + "' (use fp32 or bf16)");
}

void require_precision(Precision p, const c10::Device& device, const std::string& where) {
  if (p == Precision::Bf16 && !device.is_cpu())
    throw Error(where + ": bf16 runs on the CPU only so far; use fp32 on " + device.str());
}

ForwardPrecision::ForwardPrecision(Precision p)
    : previous_(cpu_autocast()), previous_dtype_(cpu_autocast_dtype()) {
  set_cpu_autocast(p == Precision::Bf16);
  set_cpu_autocast_dtype(at::kBFloat16);
  at::autocast::increment_nesting();
}

ForwardPrecision::~ForwardPrecision() {
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_cpu_autocast(previous_);
  set_cpu_autocast_dtype(previous_dtype_);
}

bool lower_precision_forward(const c10::Device& device) {
  return device.is_cpu() && cpu_autocast();
}

at::Tensor compute_cast(const at::Tensor& t) {
  if (!t.defined() || t.scalar_type() != at::kFloat || !lower_precision_forward(t.device())) return t;
  return at::autocast::cached_cast(cpu_autocast_dtype(), t, c10::DeviceType::CPU);
}

at::Tensor float_activation(const at::Tensor& t) {
  return t.defined() && t.scalar_type() == at::kBFloat16 ? t.to(at::kFloat) : t;
}

}  // namespace comera
