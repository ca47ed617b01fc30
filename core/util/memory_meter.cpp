#include "core/util/memory_meter.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace comera {

namespace {

// Delegates to the allocator it replaces, with a header in front of each block that keeps its
// size and the base allocator's context and deleter: counting takes two atomic adds, where a
// locked map of blocks cost a microsecond per tensor (a thousand per training step). The
// context is the data pointer itself, so the raw allocate/deallocate interface (used by oneDNN)
// keeps working.
class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base) : base_(base) {}

  // LibTorch 1.13 declares allocate() const, 2.x non-const: define both, each overrides in one.
  c10::DataPtr allocate(size_t n) const { return counted(n); }
  c10::DataPtr allocate(size_t n) { return counted(n); }
  // Pure virtual in LibTorch 2.x only.
  void copy_data(void* dest, const void* src, size_t count) const { std::memcpy(dest, src, count); }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }

  int64_t live() const { return live_.load(); }
  int64_t reset_peak() {
    const int64_t now = live_.load();
    peak_.store(now);
    return now;
  }
  int64_t peak() const { return peak_.load(); }

 private:
  // Before the data, a whole alignment unit so the data keeps the base allocator's alignment.
  struct Header {
    int64_t bytes;
    void* context;
    c10::DeleterFnPtr deleter;
  };
  static constexpr size_t kHeader = 64;
  static_assert(sizeof(Header) <= kHeader, "the header fits its slot");

  c10::DataPtr counted(size_t n) const {
    c10::DataPtr inner = base_->allocate(n + kHeader);
    auto* block = static_cast<char*>(inner.get());
    const c10::Device device = inner.device();
    const c10::DeleterFnPtr deleter = inner.get_deleter();
    void* context = inner.release_context();
    *reinterpret_cast<Header*>(block) = Header{static_cast<int64_t>(n), context, deleter};
    const int64_t live = live_.fetch_add(static_cast<int64_t>(n)) + static_cast<int64_t>(n);
    int64_t peak = peak_.load();
    while (live > peak && !peak_.compare_exchange_weak(peak, live)) {
    }
    void* data = block + kHeader;
    return c10::DataPtr(data, data, &release, device);
  }

  static void release(void* data);

  c10::Allocator* base_;
  mutable std::atomic<int64_t> live_{0}, peak_{0};
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
  if (!data) return;
  const Header header = *reinterpret_cast<const Header*>(static_cast<char*>(data) - kHeader);
  counting_allocator().live_.fetch_sub(header.bytes);
  if (header.deleter) header.deleter(header.context);
}

}  // namespace

void count_cpu_tensor_memory() { counting_allocator(); }

CpuMemoryMeter::CpuMemoryMeter() : baseline_(counting_allocator().reset_peak()) {}

int64_t CpuMemoryMeter::peak_extra_bytes() const { return counting_allocator().peak() - baseline_; }

int64_t CpuMemoryMeter::peak_bytes() const { return counting_allocator().peak(); }

int64_t CpuMemoryMeter::live_extra_bytes() const { return counting_allocator().live() - baseline_; }

}  // namespace comera
