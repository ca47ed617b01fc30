#include "search/report/report_assets.h"

// Each file is included byte for byte by the assembler (.incbin), between two symbols; CMake
// passes the paths and rebuilds this object when a file changes.
#define COMERA_EMBED(name, path)                                                        \
  asm(".section .rodata\n.balign 16\n.global " #name "_begin\n" #name "_begin:\n"       \
      ".incbin \"" path "\"\n.global " #name "_end\n" #name "_end:\n.byte 0\n.previous\n"); \
  extern "C" const char name##_begin[];                                                 \
  extern "C" const char name##_end[];

COMERA_EMBED(comera_echarts_js, COMERA_ECHARTS_JS)
COMERA_EMBED(comera_echarts_notice, COMERA_ECHARTS_NOTICE)
COMERA_EMBED(comera_report_js, COMERA_REPORT_ASSETS "/report.js")
COMERA_EMBED(comera_report_css, COMERA_REPORT_ASSETS "/report.css")
COMERA_EMBED(comera_report_html, COMERA_REPORT_ASSETS "/report.html")

namespace comera::report {

namespace {
std::string_view between(const char* begin, const char* end) {
  return {begin, static_cast<size_t>(end - begin)};
}
}  // namespace

std::string_view echarts_js() { return between(comera_echarts_js_begin, comera_echarts_js_end); }
std::string_view echarts_notice() { return between(comera_echarts_notice_begin, comera_echarts_notice_end); }
std::string_view page_script() { return between(comera_report_js_begin, comera_report_js_end); }
std::string_view page_styles() { return between(comera_report_css_begin, comera_report_css_end); }
std::string_view page_skeleton() { return between(comera_report_html_begin, comera_report_html_end); }

}  // namespace comera::report
