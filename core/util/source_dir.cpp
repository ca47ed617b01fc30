#include "core/util/source_dir.h"

namespace comera {

std::string source_dir() { return COMERA_SOURCE_DIR; }

}  // namespace comera
