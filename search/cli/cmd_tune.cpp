// `comera tune`: tunes the contraction plan of a TT layer spec at given token counts, or of every
// TT layer of an experiment config at the token counts training gives it, and stores the choices
// in the results database.
#include "core/formats/tt_shape.h"
#include "core/layers/tt_linear.h"
#include "core/models/transformer.h"
#include "core/training/experiment.h"
#include "core/util/device.h"
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
#include <set>

namespace comera::cli {
namespace {

struct LayerCase {
  std::string name;
  TTShape shape;
  int64_t tokens = 0;
};

// Every TT layer of the experiment's model, with the tokens it sees in training.
std::vector<LayerCase> experiment_cases(const std::string& file) {
  const auto e = load_experiment(file);
  const auto task = e.model.build(e.training.task, DataInfo{});
  std::vector<LayerCase> out;
  for (const auto& item : task->model().named_modules())
    if (const auto* tt = dynamic_cast<const TTLinearImpl*>(item.value().get()))
      out.push_back({item.key(), tt->shape(),
                     task->layer_rows(item.key(), e.training.batch_size, e.data.max_length)});
  if (out.empty()) throw Error(file + ": the model has no TT layers to tune (model.tensorized)");
  return out;
}

std::vector<LayerCase> cases(const cxxopts::ParseResult& r) {
  if (r.count("config")) {
    refuse_beside(r, "config", {"in-modes", "out-modes", "ranks", "rank", "tokens"},
                  "tunes every TT layer of the experiment at the tokens training gives it");
    return experiment_cases(config_flag(r));
  }
  if (!r.count("in-modes") || !r.count("out-modes"))
    throw Error("give --config experiments/x.json, or a layer (--in-modes 12,8,8 --out-modes 8,8,12 "
                "and --ranks or --rank)");
  const auto in = int_list_flag(r, "in-modes", 1);
  const auto out = int_list_flag(r, "out-modes", 1);
  const TTShape shape = r.count("ranks") ? TTShape(in, out, int_list_flag(r, "ranks", 1))
                                         : TTShape::uniform(in, out, r["rank"].as<int64_t>());
  std::vector<LayerCase> list;
  for (int64_t b : int_list_flag(r, "tokens", 1)) list.push_back({"layer", shape, b});
  return list;
}

int run(int argc, char** argv) {
  auto options = make_options("tune", "Tune and store the contraction plan of TT layers");
  options.add_options()("config", "Experiment file: tune every TT layer of its model",
                        cxxopts::value<std::string>())(
      "in-modes", "Layer input modes (e.g. 12,8,8)", cxxopts::value<std::string>())(
      "out-modes", "Layer output modes (e.g. 8,8,12)", cxxopts::value<std::string>())(
      "ranks", "Full rank list with boundary 1s (e.g. 1,12,30,30,30,12,1)",
      cxxopts::value<std::string>())(
      "rank", "Uniform interior rank, when --ranks is not given",
      cxxopts::value<int64_t>()->default_value("30"))(
      "tokens", "Token counts B (batch x sequence)", cxxopts::value<std::string>()->default_value("4096"))(
      "retune", "Measure again even where a choice is stored")(
      "device", "Where to measure: cpu, cuda or cuda:N (choices are stored per device)",
      cxxopts::value<std::string>()->default_value("cpu"))("json", "Machine-readable output");
  add_db_option(options);
  add_tuner_flags(options);
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  auto topts = tuner_options(r);
  topts.reuse_stored = !r.count("retune");
  topts.measure.device = r["device"].as<std::string>();
  require_device(parse_device(topts.measure.device));  // before the database is opened or made
  const auto dtype = dtype_option(r);
  const auto list = cases(r);

  auto db = store::ResultsDb::open(db_path(r));
  const Environment env = current_environment(topts.measure.device);
  tuner::Tuner tuner(topts, &db, env);
  tuner.set_progress([](const std::string& what) { std::cerr << "  " << what << std::endl; });
  std::cerr << "tune: " << env.fingerprint() << ", database " << db.path() << "\n";
  nlohmann::json rows = nlohmann::json::array();
  std::set<std::string> seen;  // keys already reported: repeated layers share one choice
  for (const auto& c : list) {
    const auto choice = tuner.choose(c.shape, c.tokens, dtype);
    const bool again = !seen.insert(c.shape.str() + "|" + std::to_string(tuner::token_bucket(c.tokens))).second;
    rows.push_back({{"layer", c.name},
                    {"shape", c.shape.str()},
                    {"tokens", c.tokens},
                    {"token_bucket", tuner::token_bucket(c.tokens)},
                    {"dtype", tuner::dtype_name(dtype)},
                    {"choice", choice.text},
                    {"median_ms", choice.median_ms},
                    {"stored", choice.stored}});
    if (!r.count("json"))
      std::printf("%-34s %-36s B~%-6lld %s  %.3f ms  (%s)\n", c.name.c_str(), c.shape.str().c_str(),
                  static_cast<long long>(tuner::token_bucket(c.tokens)), choice.text.c_str(),
                  choice.median_ms, again ? "as above" : choice.stored ? "stored" : "measured now");
  }
  if (r.count("json")) std::cout << rows.dump(2) << std::endl;
  return 0;
}

Register reg("tune", "Tune and store the contraction plans of TT layers", run);

}  // namespace
}  // namespace comera::cli
