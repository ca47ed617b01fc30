#pragma once
// The files the report page is made of, compiled into the binary (so the installed comera needs
// nothing beside it): ECharts' bundle as npm ships it (fetched and checked by scripts/setup.sh,
// licence included), and the page's own script, styles and HTML skeleton from assets/.
#include <string_view>

namespace comera::report {

std::string_view echarts_js();       // echarts.min.js, with its Apache-2.0 header
std::string_view echarts_notice();   // ECharts' NOTICE file
std::string_view page_script();      // assets/report.js
std::string_view page_styles();      // assets/report.css
std::string_view page_skeleton();    // assets/report.html, with @STYLES@, @DATA@, @ECHARTS@, @SCRIPT@

}  // namespace comera::report
