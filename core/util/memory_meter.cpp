#include "core/util/memory_meter.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace comera {

namespace {

// Delegates to the allocator it replaces. The context is the data pointer itself, so the raw
// allocate/deallocate interface (used by oneDNN) keeps working.
class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base) : base_(base) {}

  // LibTorch 1.13 declares allocate() const, 2.x non-const: define both, each overrides in one.
  c10::DataPtr allocate(size_t n) const { return counted(base_->allocate(n), n); }
  c10::DataPtr allocate(size_t n) { return counted(base_->allocate(n), n); }
  // Pure virtual in LibTorch 2.x only.
  void copy_data(void* dest, const void* src, size_t count) const { std::memcpy(dest, src, count); }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }

  int64_t live() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_;
  }
  int64_t reset_peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    return peak_ = live_;
  }
  int64_t peak() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return peak_;
  }

 private:
  struct Block {
    c10::DataPtr inner;
    int64_t bytes;
  };

  c10::DataPtr counted(c10::DataPtr inner, size_t n) const {
    void* data = inner.get();
    if (!data) return inner;
    const c10::Device device = inner.device();
    std::lock_guard<std::mutex> lock(mutex_);
    live_ += static_cast<int64_t>(n);
    peak_ = std::max(peak_, live_);
    blocks_.emplace(data, Block{std::move(inner), static_cast<int64_t>(n)});
    return c10::DataPtr(data, data, &release, device);
  }

  static void release(void* data);

  c10::Allocator* base_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<void*, Block> blocks_;
  mutable int64_t live_ = 0, peak_ = 0;
};

CountingAllocator& counting_allocator() {
  static CountingAllocator* instance = [] {
    auto* a = new CountingAllocator(c10::GetCPUAllocator());
    c10::SetAllocator(c10::DeviceType::CPU, a, /*priority=*/UINT8_MAX);
    return a;
  }();
  return *instance;
}

void CountingAllocator::release(void* data) {
  CountingAllocator& self = counting_allocator();
  c10::DataPtr inner;  // freed after the lock is dropped
  {
    std::lock_guard<std::mutex> lock(self.mutex_);
    auto it = self.blocks_.find(data);
    if (it == self.blocks_.end()) return;
    self.live_ -= it->second.bytes;
    inner = std::move(it->second.inner);
    self.blocks_.erase(it);
  }
}

}  // namespace

void count_cpu_tensor_memory() { counting_allocator(); }

CpuMemoryMeter::CpuMemoryMeter() : baseline_(counting_allocator().reset_peak()) {}

int64_t CpuMemoryMeter::peak_extra_bytes() const { return counting_allocator().peak() - baseline_; }

int64_t CpuMemoryMeter::peak_bytes() const { return counting_allocator().peak(); }

int64_t CpuMemoryMeter::live_extra_bytes() const { return counting_allocator().live() - baseline_; }

}  // namespace comera
