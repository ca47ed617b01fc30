#pragma once
// One `comera bench step --json` measurement in a child process of this binary, so that each
// peak of memory is its own.
#include "core/training/experiment.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace comera::cli {

// The experiment a `bench step` child measures: the file with `method` and `method_settings`
// (JSON text; "" keeps the file's), the dense build as `comera train --dense` makes it (which
// refuses a method with a build of its own), on `device`. Parents call it before any child
// starts, so a bad config or flag is refused before any work; errors name the flag.
ExperimentConfig bench_step_experiment(const std::string& file, const std::string& method,
                                       const std::string& method_settings, bool dense, const std::string& device);

// `flags` follow "bench step --json"; a failing child is an error naming its command line.
nlohmann::json bench_step_in_child(const std::vector<std::string>& flags);

}  // namespace comera::cli
