// `comera bench paths`: per layer shape, rank and token count, every candidate contraction
// plan's model cost and measured forward+backward time, the tuner's choice, the fastest, the
// merged path and dense; then a second, independent tuning run that times the first run's
// choice again against the merged path, the fastest and dense.
#include "core/formats/tt_shape.h"
#include "core/util/error.h"
#include "search/cli/command.h"
#include "search/cli/tuner_flags.h"
#include "search/tuner/tuner.h"
#include "search/tuner/tuning_key.h"

#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace comera::cli {
namespace {

struct Layer {
  std::string name;
  std::vector<int64_t> in_modes, out_modes;
};

// The paper's layer shapes (METHOD §7).
const std::vector<Layer> kPaperLayers{{"attention", {12, 8, 8}, {8, 8, 12}},
                                      {"ffn_in", {12, 8, 8}, {12, 16, 16}},
                                      {"ffn_out", {16, 16, 12}, {8, 8, 12}}};

std::vector<Layer> selected_layers(const cxxopts::ParseResult& r) {
  if (r.count("in-modes") || r.count("out-modes")) {
    if (!r.count("in-modes") || !r.count("out-modes"))
      throw Error("give both --in-modes and --out-modes (e.g. --in-modes 12,8,8 --out-modes 8,8,12)");
    return {{"custom", r["in-modes"].as<std::vector<int64_t>>(), r["out-modes"].as<std::vector<int64_t>>()}};
  }
  std::vector<Layer> out;
  for (const auto& name : r["layers"].as<std::vector<std::string>>()) {
    bool found = false;
    for (const auto& l : kPaperLayers)
      if (l.name == name) out.push_back(l), found = true;
    if (!found) throw Error("--layers: unknown layer '" + name + "' (use attention, ffn_in, ffn_out)");
  }
  return out;
}

std::string ms(const nlohmann::json& entry) {
  if (entry.is_null() || entry["median_ms"].is_null()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", entry["median_ms"].get<double>());
  return buf;
}

void print_case(const nlohmann::json& rec) {
  std::printf("\n%s  B=%lld\n", rec["shape"].get<std::string>().c_str(),
              static_cast<long long>(rec["tokens"].get<int64_t>()));
  std::printf("  %-12s %10s %10s %10s %10s %10s %4s  %s\n", "candidate", "MACs", "written", "peak",
              "score", "median ms", "reps", "order");
  for (const auto& c : rec["candidates"])
    std::printf("  %-12s %10.3g %10.3g %10.3g %10.3g %10s %4d  %s\n",
                c["name"].get<std::string>().c_str(), c["macs"].get<double>(),
                c["written"].get<double>(), c["peak"].get<double>(), c["score"].get<double>(),
                ms(c).c_str(), c["repeats"].get<int>(), c["order"].get<std::string>().c_str());
  const auto& v = rec["verify"];
  std::printf("  chosen %s (%s ms), fastest %s (%s ms), merged %s ms, dense %s ms\n",
              rec["chosen"]["name"].get<std::string>().c_str(), ms(rec["chosen"]).c_str(),
              rec["fastest"]["name"].get<std::string>().c_str(), ms(rec["fastest"]).c_str(),
              ms(rec["merged"]).c_str(), ms(rec["dense"]).c_str());
  if (!v.is_null())
    std::printf("  second run: chosen %s ms, merged %s ms, fastest %s (%s ms), dense %s ms\n",
                ms(v["chosen"]).c_str(), ms(v["merged"]).c_str(),
                v["fastest"]["name"].get<std::string>().c_str(), ms(v["fastest"]).c_str(),
                ms(v["dense"]).c_str());
  std::fflush(stdout);
}

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

int run(int argc, char** argv) {
  auto options = make_options("bench paths",
                              "Model cost and measured time of every candidate contraction plan");
  options.add_options()("layers", "Paper layers to run (attention, ffn_in, ffn_out)",
                        cxxopts::value<std::vector<std::string>>()->default_value("attention,ffn_in,ffn_out"))(
      "in-modes", "Custom layer: input modes (e.g. 12,8,8)", cxxopts::value<std::vector<int64_t>>())(
      "out-modes", "Custom layer: output modes", cxxopts::value<std::vector<int64_t>>())(
      "ranks", "Uniform interior ranks (capped at their bounds)",
      cxxopts::value<std::vector<int64_t>>()->default_value("8,16,30,64"))(
      "tokens", "Token counts B", cxxopts::value<std::vector<int64_t>>()->default_value("1,32,4096,16384"))(
      "no-verify", "Skip the second, independent tuning run")("json", "One JSON record per case");
  add_tuner_flags(options);
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  const auto topts = tuner_options(r);
  const auto dtype = dtype_option(r);
  const bool json = r.count("json") > 0;
  const auto layers = selected_layers(r);
  const auto ranks = r["ranks"].as<std::vector<int64_t>>();
  const auto tokens = r["tokens"].as<std::vector<int64_t>>();
  for (int64_t b : tokens)
    if (b < 1) throw Error("--tokens: every token count must be >= 1");
  std::cerr << "bench paths: " << at::get_num_threads() << " threads, " << tuner::dtype_name(dtype)
            << ", " << r["clock"].as<std::string>() << " clock, budget " << topts.measure.budget_ms << " ms per case (big cases get fewer repeats; "
            << "candidates " << topts.measure.abandon << "x slower than the best first run are timed once)\n";
  nlohmann::json records = nlohmann::json::array();
  const size_t total = layers.size() * ranks.size() * tokens.size();
  size_t done = 0;
  for (const auto& layer : layers)
    for (int64_t rank : ranks)
      for (int64_t b : tokens) {
        const TTShape shape = TTShape::uniform(layer.in_modes, layer.out_modes, rank);
        std::cerr << "[" << ++done << "/" << total << "] " << layer.name << " " << shape.str()
                  << " B=" << b << std::endl;
        const auto result = tuner::tune(shape, b, dtype, topts, [](const std::string& what) {
          std::cerr << "    " << what << std::endl;
        });
        auto rec = result.to_json();
        rec["layer"] = layer.name;
        rec["threads"] = at::get_num_threads();
        rec["clock"] = r["clock"].as<std::string>();
        rec["verify"] = r.count("no-verify") ? nlohmann::json() : verify(result, dtype, topts);
        if (!json) print_case(rec);
        records.push_back(rec);
      }
  if (json) std::cout << records.dump(2) << std::endl;
  return 0;
}

Register reg("bench paths", "Every candidate contraction plan's model cost and time, and the tuner's pick", run);

}  // namespace
}  // namespace comera::cli
