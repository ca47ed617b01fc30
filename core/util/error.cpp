#include "core/util/error.h"

#include <c10/util/Exception.h>

namespace comera {

std::string error_message(const std::exception& e) {
  if (auto* c10 = dynamic_cast<const c10::Error*>(&e)) return c10->what_without_backtrace();
  return e.what();
}

}  // namespace comera
