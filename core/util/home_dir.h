#pragma once
// Where comera reads what it ships (experiments/, data/vocab/) and keeps the data sets that
// `comera data ...` builds (data/): $COMERA_HOME when set; else, for an installed binary
// (<prefix>/bin/comera), the <prefix>/share/comera that `cmake --install` fills; else the
// checkout it was built from (source_dir()).
#include <string>

namespace comera {

std::string home_dir();

// A relative path missing from the working directory, in comera's home where it is there (the
// presets' experiments/... and data/... wherever comera runs from); else the path as given.
std::string home_path(const std::string& path);

}  // namespace comera
