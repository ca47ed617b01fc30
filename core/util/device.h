#pragma once
// The device a run computes on ("cpu", "cuda", "cuda:1"): parsed where the config or the
// command line names it, and checked against the machine before any work starts.
#include <c10/core/Device.h>

#include <string>

namespace comera {

// Throws comera::Error naming `where` (e.g. "training.device") when `text` is not a device.
c10::Device parse_device(const std::string& text, const std::string& where = "--device");

// Throws comera::Error when this process cannot compute on `device` (a CPU-only LibTorch asked
// for CUDA, or a GPU index beyond those present).
void require_device(const c10::Device& device);

}  // namespace comera
