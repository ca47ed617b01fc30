#include "core/util/precision.h"

#include "core/util/error.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>

namespace comera {

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
    : previous_(at::autocast::is_cpu_enabled()), previous_dtype_(at::autocast::get_autocast_cpu_dtype()) {
  at::autocast::set_cpu_enabled(p == Precision::Bf16);
  at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  at::autocast::increment_nesting();
}

ForwardPrecision::~ForwardPrecision() {
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_cpu_enabled(previous_);
  at::autocast::set_autocast_cpu_dtype(previous_dtype_);
}

bool lower_precision_forward(const c10::Device& device) {
  return device.is_cpu() && at::autocast::is_cpu_enabled();
}

at::Tensor compute_cast(const at::Tensor& t) {
  if (!t.defined() || t.scalar_type() != at::kFloat || !lower_precision_forward(t.device())) return t;
  return at::autocast::cached_cast(at::autocast::get_autocast_cpu_dtype(), t, c10::DeviceType::CPU);
}

at::Tensor float_activation(const at::Tensor& t) {
  return t.defined() && t.scalar_type() == at::kBFloat16 ? t.to(at::kFloat) : t;
}

}  // namespace comera
