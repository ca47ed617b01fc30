#pragma once
// One `comera bench step --json` measurement in a child process of this binary, so that each
// peak of memory is its own.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace comera::cli {

// `flags` follow "bench step --json"; a failing child is an error naming its command line.
nlohmann::json bench_step_in_child(const std::vector<std::string>& flags);

}  // namespace comera::cli
