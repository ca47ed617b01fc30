#pragma once
// Per layer shape, rank and token count: every candidate contraction plan's model cost and
// measured forward+backward time, the tuner's choice, the fastest, the merged path and dense;
// then a second, independent tuning run that times the first run's choice again. The numbers
// behind `comera bench paths`. It lives in search/, not search/bench/, because it runs the tuner.
#include "search/tuner/tuner.h"

#include <c10/core/ScalarType.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace comera::bench {

struct PathsLayer {
  std::string name;
  std::vector<int64_t> in_modes, out_modes;
};

// A layer shape of the paper (docs/method.md section 7): attention, ffn_in or ffn_out.
PathsLayer paper_paths_layer(const std::string& name);

struct PathsBenchmarkOptions {
  std::vector<PathsLayer> layers;
  std::vector<int64_t> ranks;   // uniform interior ranks, capped at their bounds
  std::vector<int64_t> tokens;  // token counts B
  at::ScalarType dtype = at::kFloat;
  tuner::TunerOptions tuner;
  bool verify = true;           // the second, independent tuning run
};

struct PathsCase {
  std::string layer;
  int threads = 0;
  std::string device;    // device_description() of the CPU: its model and BLAS kernels
  std::string clock;     // "wall" or "cpu"
  tuner::TuneResult tuned;
  nlohmann::json verify;  // the second run's times (null without it)
  nlohmann::json to_json() const;
};

struct PathsBenchmarkEvents {
  // A case starts: its place among all cases, the layer, shape and token count.
  std::function<void(size_t number, size_t total, const std::string& layer, const TTShape& shape,
                     int64_t tokens)> on_start;
  std::function<void(const std::string& what)> on_progress;  // the tuner's
  std::function<void(const PathsCase&)> on_case;             // a case is done
};

std::vector<PathsCase> benchmark_paths(const PathsBenchmarkOptions& options,
                                       const PathsBenchmarkEvents& events = {});

}  // namespace comera::bench
