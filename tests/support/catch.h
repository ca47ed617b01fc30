#pragma once
// Catch2 v2 (Debian 12) and v3 both work: CMake passes the major version it found, so the headers
// match the library linked even where both versions are installed.
#if COMERA_CATCH2_MAJOR >= 3
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
using Catch::Approx;
// v2's substring matcher under its v2 name (v3 calls it ContainsSubstring).
namespace Catch::Matchers {
inline StringContainsMatcher Contains(const std::string& text, CaseSensitive cs = CaseSensitive::Yes) {
  return ContainsSubstring(text, cs);
}
}  // namespace Catch::Matchers
#else
#include <catch2/catch.hpp>
#endif
