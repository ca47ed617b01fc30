#include "search/report/report_page.h"

#include "core/util/error.h"
#include "search/report/report_assets.h"

#include <map>

namespace comera::report {

namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string escape_html(const std::string& text) {
  return replace_all(replace_all(replace_all(text, "&", "&amp;"), "<", "&lt;"), ">", "&gt;");
}

// A script's text ends at the first "</script": none of ours may hold one.
std::string script(std::string_view text, const std::string& what) {
  if (text.find("</script") != std::string_view::npos)
    throw Error(what + " holds \"</script\" and cannot be inlined into the report page");
  return std::string(text);
}

}  // namespace

std::string report_html(const nlohmann::json& data, const std::string& title) {
  // "<" occurs in JSON only inside strings, where "\u003c" reads back the same; escaping every
  // one (not only "</") also keeps "<!--" and "<script" from changing how the browser finds the
  // script's end.
  const std::string json = replace_all(data.dump(), "<", "\\u003c");
  const std::string_view skeleton = page_skeleton();
  const std::map<std::string, std::string> parts = {
      {"@TITLE@", escape_html(title)},
      {"@STYLES@", std::string(page_styles())},
      {"@ECHARTS_NOTICE@", escape_html(std::string(echarts_notice()))},
      {"@ECHARTS@", script(echarts_js(), "ECharts' bundle")},
      {"@DATA@", json},
      {"@SCRIPT@", script(page_script(), "the report's script")}};
  // Marks are found in the skeleton only, never in the text put in their place.
  std::map<size_t, std::string> at;
  for (const auto& [mark, text] : parts) {
    const auto where = skeleton.find(mark);
    if (where == std::string_view::npos) throw Error("the report's skeleton has no " + mark);
    at[where] = mark;
  }
  std::string page;
  size_t from = 0;
  for (const auto& [where, mark] : at) {
    page.append(skeleton.substr(from, where - from));
    page += parts.at(mark);
    from = where + mark.size();
  }
  page.append(skeleton.substr(from));
  return page;
}

}  // namespace comera::report
