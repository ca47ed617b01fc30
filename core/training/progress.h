#pragma once
// A progress line on stderr: redrawn in place on a terminal, printed every few seconds
// otherwise (logs stay readable).
#include <chrono>
#include <string>

namespace comera {

class ProgressLine {
 public:
  // live: redraw the line as work goes on; lines: print finished lines (both go to stderr).
  ProgressLine(bool live, bool lines);
  // Whether update() would draw now (so callers build the text only then).
  bool due() const;
  // Rate-limited; `force` draws now.
  void update(const std::string& text, bool force = false);
  // Leaves the line on screen and starts a new one.
  void finish(const std::string& text);

 private:
  bool live_, lines_, tty_;
  size_t width_ = 0;
  std::chrono::steady_clock::time_point last_{};
};

// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);

}  // namespace comera
