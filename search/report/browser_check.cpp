#include "search/report/browser_check.h"

#include "core/util/error.h"
#include "core/util/process.h"
#include "core/util/remove_tree.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace comera::report {

namespace {

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream folders(path ? path : "");
  for (std::string folder; std::getline(folders, folder, ':');)
    if (!folder.empty() && ::access((folder + "/" + program).c_str(), X_OK) == 0) return true;
  return false;
}

std::string unescape_html(std::string text) {
  const std::pair<std::string, std::string> entities[] = {{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""},
                                                          {"&#39;", "'"}, {"&nbsp;", " "}, {"&amp;", "&"}};
  for (const auto& [from, to] : entities)
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  return text;
}

}  // namespace

std::string headless_browser() {
  if (const char* chosen = std::getenv("COMERA_CHROMIUM"); chosen && *chosen) return chosen;
  for (const char* program : {"chromium", "chromium-browser"})
    if (on_path(program)) return program;
  throw Error("no headless Chromium found (chromium or chromium-browser on PATH): bash scripts/setup.sh installs "
              "Debian's chromium, or set COMERA_CHROMIUM to a Chrome or Chromium binary");
}

BrowserCheck check_in_browser(const std::string& html_path, int width, int height) {
  BrowserCheck out;
  out.browser = headless_browser();
  // A profile of its own: browsers started side by side (parallel tests) would share the default one.
  std::string profile = (std::filesystem::temp_directory_path() / "comera_browser_XXXXXX").string();
  if (!::mkdtemp(profile.data())) throw Error("cannot make a browser profile folder under " + profile);
  std::vector<std::string> argv = {out.browser, "--headless", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                                   "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
                                   "--window-size=" + std::to_string(width) + "," + std::to_string(height),
                                   "--dump-dom", "file://" + std::filesystem::absolute(html_path).string() + "#selftest"};
  // Chromium refuses to run as root with its sandbox on.
  if (::geteuid() == 0) argv.insert(argv.begin() + 1, "--no-sandbox");
  const auto start = std::chrono::steady_clock::now();
  const auto result = run_process(argv, out.browser + " opening " + html_path, ErrorOutput::Merge);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  remove_tree(profile);
  std::stringstream lines(result.output);
  for (std::string line; std::getline(lines, line);)
    if (line.find(":CONSOLE") != std::string::npos) out.console.push_back(line);
  const std::string open = "<pre id=\"selftest\">";
  const auto begin = result.output.find(open);
  const auto end = begin == std::string::npos ? begin : result.output.find("</pre>", begin);
  if (result.status != 0 || end == std::string::npos)
    throw Error(out.browser + " did not show " + html_path + "'s findings (exit status " +
                std::to_string(result.status) + "); it printed:\n" + result.output.substr(0, 4000));
  out.selftest = nlohmann::json::parse(unescape_html(result.output.substr(begin + open.size(), end - begin - open.size())));
  return out;
}

}  // namespace comera::report
