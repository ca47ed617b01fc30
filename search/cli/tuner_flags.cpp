#include "search/cli/tuner_flags.h"

#include "core/util/error.h"

namespace comera::cli {

void add_tuner_flags(cxxopts::Options& options) {
  options.add_options("tuner")(
      "top-k", "Best plans by the cost model to measure", cxxopts::value<int>()->default_value("4"))(
      "mixed", "Best forward/backward-mixed plans to measure", cxxopts::value<int>()->default_value("2"))(
      "weights", "Cost-model weights (macs=,written=,saved=,peak=)",
      cxxopts::value<std::string>()->default_value("macs=1,written=8,saved=0,peak=0"))(
      "margin", "Fraction by which a plan must beat the merged path",
      cxxopts::value<double>()->default_value("0.03"))(
      "budget-ms", "Timed work per case (fewer repeats for big cases)",
      cxxopts::value<double>()->default_value("3000"))(
      "min-repeats", "Timed runs per candidate at least", cxxopts::value<int>()->default_value("5"))(
      "max-repeats", "Timed runs per candidate at most", cxxopts::value<int>()->default_value("400"))(
      "clock", "wall, or cpu (process CPU time: steadier on a shared machine)",
      cxxopts::value<std::string>()->default_value("wall"))(
      "dtype", "float32 or float64", cxxopts::value<std::string>()->default_value("float32"));
}

tuner::TunerOptions tuner_options(const cxxopts::ParseResult& r) {
  tuner::TunerOptions o;
  o.candidates.top_k = r["top-k"].as<int>();
  o.candidates.mixed = r["mixed"].as<int>();
  o.candidates.weights = contract::CostWeights::parse(r["weights"].as<std::string>());
  o.margin = r["margin"].as<double>();
  o.measure.budget_ms = r["budget-ms"].as<double>();
  o.measure.min_repeats = r["min-repeats"].as<int>();
  o.measure.max_repeats = r["max-repeats"].as<int>();
  o.measure.clock = tuner::parse_clock(r["clock"].as<std::string>());
  if (o.candidates.top_k < 1) throw Error("--top-k must be >= 1");
  if (o.measure.min_repeats < 1) throw Error("--min-repeats must be >= 1");
  if (o.measure.max_repeats < o.measure.min_repeats)
    throw Error("--max-repeats " + std::to_string(o.measure.max_repeats) + " is below --min-repeats " +
                std::to_string(o.measure.min_repeats) + ": give at least as many");
  if (!(o.measure.budget_ms > 0))
    throw Error("--budget-ms " + std::to_string(o.measure.budget_ms) + ": give the timed work per case, above 0");
  if (o.candidates.mixed < 0) throw Error("--mixed must be >= 0");
  if (o.margin < 0 || o.margin >= 1) throw Error("--margin must be in [0, 1), e.g. 0.03");
  return o;
}

at::ScalarType dtype_option(const cxxopts::ParseResult& r) {
  const auto name = r["dtype"].as<std::string>();
  if (name == "float32") return at::kFloat;
  if (name == "float64") return at::kDouble;
  throw Error("--dtype " + name + " is not supported; use float32 or float64");
}

}  // namespace comera::cli
