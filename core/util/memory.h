#pragma once
// Resident memory of this process (Linux /proc), for peak-memory figures on CPU: the peak RSS
// (VmHWM) above an idle baseline taken before the work starts.
#include <cstdint>

namespace comera {

int64_t current_rss_bytes();  // VmRSS; 0 where /proc is unavailable
// The baseline for a peak: RSS after the heap has handed its freed memory back to the OS.
int64_t idle_rss_bytes();
int64_t peak_rss_bytes();     // VmHWM; 0 where /proc is unavailable
// Sets the peak back to the current RSS (writes 5 to /proc/self/clear_refs); false if the
// kernel does not allow it, in which case peaks count from process start.
bool reset_peak_rss();

}  // namespace comera
