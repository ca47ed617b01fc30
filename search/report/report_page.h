#pragma once
// The report as one self-contained HTML page: styles, ECharts, the data and the page's script
// inlined, so it opens from disk with no network and no server.
#include <nlohmann/json.hpp>

#include <string>

namespace comera::report {

// `data`: report_data's document. `title`: the page's title.
std::string report_html(const nlohmann::json& data, const std::string& title);

}  // namespace comera::report
