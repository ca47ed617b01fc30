#include "core/util/memory.h"

#include "core/util/allocator.h"

#include <fstream>
#include <sstream>
#include <string>

namespace comera {

namespace {

int64_t status_kb(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) {
      std::istringstream fields(line.substr(field.size() + 1));
      int64_t kb = 0;
      fields >> kb;
      return kb;
    }
  return 0;
}

}  // namespace

int64_t current_rss_bytes() { return status_kb("VmRSS") * 1024; }

int64_t idle_rss_bytes() {
  release_freed_memory();
  return current_rss_bytes();
}
int64_t peak_rss_bytes() { return status_kb("VmHWM") * 1024; }

bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace comera
