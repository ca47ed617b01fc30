#pragma once
// An experiment whose transformer is small enough that a training step takes milliseconds, with
// settings for every baseline method: for the tests that run `comera bench step|methods`.
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace comera::testing {

// Writes the experiment to `path` and returns the path.
inline std::string write_tiny_experiment(const std::string& path) {
  std::ofstream(path) << nlohmann::json{
      {"model", {{"vocab", 100}, {"d_model", 8}, {"heads", 2}, {"layers", 1}, {"ffn", 16},
                 {"max_positions", 8}, {"classes", 3}, {"dropout", 0.0},
                 {"tensorized", {{"attention", {{"in_modes", {4, 2}}, {"out_modes", {2, 4}}, {"ranks", 2}}}}}}},
      {"training", {{"truncation", {{"when", "never"}}}}},
      {"method_settings", {{"galore", {{"rank", 2}}}, {"lte", {{"rank", 2}, {"heads", 2}}},
                           {"lowrank", {{"rank", 2}}}}}}.dump();
  return path;
}

}  // namespace comera::testing
