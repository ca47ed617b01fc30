#include "search/bench/paths_benchmark.h"

#include "core/formats/tt_shape.h"
#include "core/util/accelerator.h"
#include "core/util/error.h"

#include <ATen/Parallel.h>

namespace comera::bench {

namespace {

const std::vector<PathsLayer> kPaperLayers{{"attention", {12, 8, 8}, {8, 8, 12}},
                                           {"ffn_in", {12, 8, 8}, {12, 16, 16}},
                                           {"ffn_out", {16, 16, 12}, {8, 8, 12}}};

// A second, independent tuning run on fresh inputs: how the first run's choice fares there
// against the merged path, the fastest candidate and dense.
nlohmann::json verify(const tuner::TuneResult& first, at::ScalarType dtype, tuner::TunerOptions options) {
  options.measure.seed += 1;
  const auto again = tuner::tune(first.shape, first.tokens, dtype, options);
  int chosen = -1;
  for (size_t i = 0; i < again.candidates.size(); ++i)
    if (again.candidates[i].text == first.candidates[first.chosen].text) chosen = static_cast<int>(i);
  return {{"chosen", again.entry_json(chosen)},
          {"merged", again.entry_json(again.merged)},
          {"fastest", again.entry_json(again.fastest)},
          {"dense", again.entry_json(again.dense)},
          {"chosen_again", again.entry_json(again.chosen)}};
}

}  // namespace

PathsLayer paper_paths_layer(const std::string& name) {
  for (const auto& l : kPaperLayers)
    if (l.name == name) return l;
  throw Error("unknown paper layer '" + name + "' (use attention, ffn_in, ffn_out)");
}

nlohmann::json PathsCase::to_json() const {
  auto rec = tuned.to_json();
  rec["layer"] = layer;
  rec["threads"] = threads;
  rec["device"] = device;
  rec["clock"] = clock;
  rec["verify"] = verify;
  return rec;
}

std::vector<PathsCase> benchmark_paths(const PathsBenchmarkOptions& options,
                                       const PathsBenchmarkEvents& events) {
  for (int64_t b : options.tokens)
    if (b < 1) throw Error("paths benchmark: every token count must be >= 1, got " + std::to_string(b));
  std::vector<PathsCase> cases;
  const size_t total = options.layers.size() * options.ranks.size() * options.tokens.size();
  for (const auto& layer : options.layers)
    for (int64_t rank : options.ranks)
      for (int64_t b : options.tokens) {
        const TTShape shape = TTShape::uniform(layer.in_modes, layer.out_modes, rank);
        if (events.on_start) events.on_start(cases.size() + 1, total, layer.name, shape, b);
        PathsCase c;
        c.layer = layer.name;
        c.threads = at::get_num_threads();
        c.device = device_description(c10::Device(c10::kCPU));
        c.clock = options.tuner.measure.clock == tuner::Clock::Cpu ? "cpu" : "wall";
        c.tuned = tuner::tune(shape, b, options.dtype, options.tuner, events.on_progress);
        if (options.verify) c.verify = verify(c.tuned, options.dtype, options.tuner);
        if (events.on_case) events.on_case(c);
        cases.push_back(std::move(c));
      }
  return cases;
}

}  // namespace comera::bench
