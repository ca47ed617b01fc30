#pragma once
// Opens a report page in headless Chromium with its self-check on (report.html#selftest) and
// returns what the page found: the points drawn per status before and after a redraw, painted
// pixels, its errors and how long it took to draw; with whatever the browser logged from the
// page's console. For the tests and `comera bench report`.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace comera::report {

struct BrowserCheck {
  nlohmann::json selftest;            // the page's own findings (assets/report.js, #selftest)
  std::vector<std::string> console;   // lines the page logged (none expected)
  double seconds = 0;                 // the browser's whole run, start-up included
  std::string browser;                // the program run
};

// The headless browser to run: $COMERA_CHROMIUM, else chromium or chromium-browser on PATH;
// throws comera::Error naming the fix when there is none.
std::string headless_browser();

// Throws comera::Error when the browser fails or the page wrote no findings.
BrowserCheck check_in_browser(const std::string& html_path, int width = 1280, int height = 2000);

}  // namespace comera::report
