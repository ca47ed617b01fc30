#include "search/cli/stop_signals.h"

#include <csignal>

namespace comera::cli {

namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};

extern "C" void on_stop_signal(int signal) {
  if (g_stop.load() && signal != SIGPIPE) {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  g_signal.store(signal);
  g_stop.store(true);
}

}  // namespace

const std::atomic<bool>& stop_on_signals() {
  static const bool installed = [] {
    for (int s : {SIGINT, SIGTERM, SIGPIPE}) std::signal(s, on_stop_signal);
    return true;
  }();
  (void)installed;
  return g_stop;
}

int stop_signal() { return g_signal.load(); }

int signal_exit_code() { return 128 + g_signal.load(); }

}  // namespace comera::cli
