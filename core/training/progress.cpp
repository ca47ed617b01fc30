#include "core/training/progress.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace comera {

ProgressLine::ProgressLine(bool live, bool lines)
    : live_(live), lines_(lines), tty_(isatty(fileno(stderr)) != 0) {}

bool ProgressLine::due() const {
  const auto every = tty_ ? std::chrono::milliseconds(200) : std::chrono::milliseconds(10000);
  return live_ && std::chrono::steady_clock::now() - last_ >= every;
}

void ProgressLine::update(const std::string& text, bool force) {
  if (!live_ || (!force && !due())) return;
  last_ = std::chrono::steady_clock::now();
  if (tty_) {
    std::string padded = text;
    if (padded.size() < width_) padded.resize(width_, ' ');
    width_ = text.size();
    std::cerr << '\r' << padded << std::flush;
  } else {
    std::cerr << text << std::endl;
  }
}

void ProgressLine::finish(const std::string& text) {
  if (!lines_) return;
  if (live_ && tty_) {
    update(text, true);
    std::cerr << std::endl;
    width_ = 0;
  } else {
    std::cerr << text << std::endl;
  }
  last_ = {};
}

std::string format_duration(double seconds) {
  const long s = seconds < 0 ? 0 : static_cast<long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s / 60) % 60);
  else if (s >= 60)
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lds", s);
  return buf;
}

}  // namespace comera
