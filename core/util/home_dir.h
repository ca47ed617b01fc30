#pragma once
// Where comera reads what it ships (experiments/, data/vocab/) and keeps the data sets that
// `comera data ...` builds (data/): $COMERA_HOME when set; else, for an installed binary
// (<prefix>/bin/comera), the <prefix>/share/comera that `cmake --install` fills; else the
// checkout it was built from (source_dir()).
#include <string>

namespace comera {

std::string home_dir();

}  // namespace comera
