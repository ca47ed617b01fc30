#pragma once
// The source tree's root (where data/, experiments/ and tests/fixtures/ live), fixed when the
// build is configured. One translation unit holds it, so a second checkout's build differs from
// the first in that one object only and shares the compiler cache for every other.
#include <string>

namespace comera {

std::string source_dir();

}  // namespace comera
