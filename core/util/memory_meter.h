#pragma once
// Peak CPU tensor memory of a piece of work, for benchmarks: LibTorch's CPU allocator is wrapped
// (on first use, for the rest of the process) by one that counts the bytes of live tensor
// storage. Memory that libraries allocate outside LibTorch's allocator (BLAS buffers) is not seen.
#include <cstdint>

namespace comera {

// Installs the counting allocator now (once per process), so that every tensor allocated from
// here on, parameters included, is counted: `comera` calls it before any command runs.
void count_cpu_tensor_memory();

class CpuMemoryMeter {
 public:
  // Starts measuring: the peak is reset to the bytes live now. One meter at a time.
  CpuMemoryMeter();
  // Highest live bytes since construction, minus the bytes live at construction.
  int64_t peak_extra_bytes() const;
  // Highest live bytes since construction, all counted tensors included.
  int64_t peak_bytes() const;
  // Live bytes now, minus the bytes live at construction.
  int64_t live_extra_bytes() const;

 private:
  int64_t baseline_ = 0;
};

}  // namespace comera
