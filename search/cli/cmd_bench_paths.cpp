// `comera bench paths`: per layer shape, rank and token count, every candidate contraction
// plan's model cost and measured forward+backward time, the tuner's choice, the fastest, the
// merged path and dense; then a second, independent tuning run that times the first run's
// choice again against the merged path, the fastest and dense (search/bench/paths_benchmark.h).
#include "core/formats/tt_shape.h"
#include "core/util/error.h"
#include "search/bench/paths_benchmark.h"
#include "search/cli/command.h"
#include "search/cli/tuner_flags.h"
#include "search/environment.h"
#include "search/tuner/tuning_key.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace comera::cli {
namespace {

std::vector<bench::PathsLayer> selected_layers(const cxxopts::ParseResult& r) {
  if (r.count("in-modes") || r.count("out-modes")) {
    if (!r.count("in-modes") || !r.count("out-modes"))
      throw Error("give both --in-modes and --out-modes (e.g. --in-modes 12,8,8 --out-modes 8,8,12)");
    refuse_beside(r, "in-modes", {"layers"}, "measures the one layer --in-modes and --out-modes describe");
    return {{"custom", int_list_flag(r, "in-modes", 1), int_list_flag(r, "out-modes", 1)}};
  }
  std::vector<bench::PathsLayer> out;
  for (const auto& name : string_list_flag(r, "layers")) {
    try {
      out.push_back(bench::paper_paths_layer(name));
    } catch (const Error& e) {
      throw Error(std::string("--layers: ") + e.what());
    }
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

int run(int argc, char** argv) {
  auto options = make_options("bench paths",
                              "Model cost and measured time of every candidate contraction plan");
  options.add_options()("layers", "Paper layers to run (attention, ffn_in, ffn_out)",
                        cxxopts::value<std::string>()->default_value("attention,ffn_in,ffn_out"))(
      "in-modes", "Custom layer: input modes (e.g. 12,8,8)", cxxopts::value<std::string>())(
      "out-modes", "Custom layer: output modes", cxxopts::value<std::string>())(
      "ranks", "Uniform interior ranks (capped at their bounds)",
      cxxopts::value<std::string>()->default_value("8,16,30,64"))(
      "tokens", "Token counts B", cxxopts::value<std::string>()->default_value("1,32,4096,16384"))(
      "no-verify", "Skip the second, independent tuning run")("json", "One JSON record per case");
  add_tuner_flags(options);
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  bench::PathsBenchmarkOptions o;
  o.tuner = tuner_options(r);
  o.dtype = dtype_option(r);
  o.layers = selected_layers(r);
  o.ranks = int_list_flag(r, "ranks", 1);
  o.tokens = int_list_flag(r, "tokens", 1);
  o.verify = !r.count("no-verify");
  const bool json = r.count("json") > 0;
  const auto on = current_environment().describe();
  if (!json) std::printf("Measured on %s; dense and ATen plans run in its BLAS.\n", on.c_str());
  std::cerr << "bench paths: " << on << ", " << tuner::dtype_name(o.dtype)
            << ", " << r["clock"].as<std::string>() << " clock, budget " << o.tuner.measure.budget_ms << " ms per case (big cases get fewer repeats; "
            << "candidates " << o.tuner.measure.abandon << "x slower than the best first run are timed once)\n";
  nlohmann::json records = nlohmann::json::array();
  bench::PathsBenchmarkEvents events;
  events.on_start = [](size_t number, size_t total, const std::string& layer, const TTShape& shape,
                       int64_t tokens) {
    std::cerr << "[" << number << "/" << total << "] " << layer << " " << shape.str() << " B=" << tokens
              << std::endl;
  };
  events.on_progress = [](const std::string& what) { std::cerr << "    " << what << std::endl; };
  events.on_case = [&](const bench::PathsCase& c) {
    auto rec = c.to_json();
    if (!json) print_case(rec);
    records.push_back(rec);
  };
  bench::benchmark_paths(o, events);
  if (json) std::cout << records.dump(2) << std::endl;
  return 0;
}

Register reg("bench paths", "Every candidate contraction plan's model cost and time, and the tuner's pick", run);

}  // namespace
}  // namespace comera::cli
