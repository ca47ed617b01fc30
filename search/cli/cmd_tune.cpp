// `comera tune`: tunes the contraction plan of a TT layer spec, or of every TT layer of an
// experiment config, at a token count, and stores the choices in the results database.
#include "core/formats/tt_shape.h"
#include "core/util/error.h"
#include "search/cli/command.h"
#include "search/cli/db_option.h"
#include "search/cli/tuner_flags.h"
#include "search/environment.h"
#include "search/store/results_db.h"
#include "search/tuner/tuner.h"
#include "search/tuner/tuning_key.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace comera::cli {
namespace {

struct LayerSpec {
  std::string name;
  TTShape shape;
};

std::vector<LayerSpec> layer_specs(const cxxopts::ParseResult& r) {
  if (!r.count("in-modes") || !r.count("out-modes"))
    throw Error("give a layer (--in-modes 12,8,8 --out-modes 8,8,12 and --ranks or --rank)");
  const auto in = r["in-modes"].as<std::vector<int64_t>>();
  const auto out = r["out-modes"].as<std::vector<int64_t>>();
  if (r.count("ranks")) return {{"layer", TTShape(in, out, r["ranks"].as<std::vector<int64_t>>())}};
  return {{"layer", TTShape::uniform(in, out, r["rank"].as<int64_t>())}};
}

int run(int argc, char** argv) {
  auto options = make_options("tune", "Tune and store the contraction plan of TT layers");
  options.add_options()("in-modes", "Layer input modes (e.g. 12,8,8)", cxxopts::value<std::vector<int64_t>>())(
      "out-modes", "Layer output modes (e.g. 8,8,12)", cxxopts::value<std::vector<int64_t>>())(
      "ranks", "Full rank list with boundary 1s (e.g. 1,12,30,30,30,12,1)",
      cxxopts::value<std::vector<int64_t>>())(
      "rank", "Uniform interior rank, when --ranks is not given",
      cxxopts::value<int64_t>()->default_value("30"))(
      "tokens", "Token counts B (batch x sequence)", cxxopts::value<std::vector<int64_t>>()->default_value("4096"))(
      "retune", "Measure again even where a choice is stored")("json", "Machine-readable output");
  add_db_option(options);
  add_tuner_flags(options);
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  auto topts = tuner_options(r);
  topts.reuse_stored = !r.count("retune");
  const auto dtype = dtype_option(r);
  const auto specs = layer_specs(r);
  const auto tokens = r["tokens"].as<std::vector<int64_t>>();
  for (int64_t b : tokens)
    if (b < 1) throw Error("--tokens: every token count must be >= 1");

  auto db = store::ResultsDb::open(db_path(r));
  const Environment env = current_environment();
  tuner::Tuner tuner(topts, &db, env);
  tuner.set_progress([](const std::string& what) { std::cerr << "  " << what << std::endl; });
  std::cerr << "tune: " << env.fingerprint() << ", database " << db.path() << "\n";
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& spec : specs)
    for (int64_t b : tokens) {
      const auto choice = tuner.choose(spec.shape, b, dtype);
      nlohmann::json row{{"layer", spec.name},
                         {"shape", spec.shape.str()},
                         {"tokens", b},
                         {"token_bucket", tuner::token_bucket(b)},
                         {"dtype", tuner::dtype_name(dtype)},
                         {"choice", choice.text},
                         {"median_ms", choice.median_ms},
                         {"stored", choice.stored}};
      rows.push_back(row);
      if (!r.count("json"))
        std::printf("%-10s %-36s B~%-6lld %s  %.3f ms  (%s)\n", spec.name.c_str(),
                    spec.shape.str().c_str(), static_cast<long long>(tuner::token_bucket(b)),
                    choice.text.c_str(), choice.median_ms, choice.stored ? "stored" : "measured now");
    }
  if (r.count("json")) std::cout << rows.dump(2) << std::endl;
  return 0;
}

Register reg("tune", "Tune and store the contraction plans of TT layers", run);

}  // namespace
}  // namespace comera::cli
