#pragma once
// User-facing errors: the message names the thing that is wrong and how to fix it.
#include <stdexcept>
#include <string>

namespace comera {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Message of any exception without LibTorch's C++ backtrace.
std::string error_message(const std::exception& e);

}  // namespace comera
