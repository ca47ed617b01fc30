// `comera train`: trains an experiment config with the bi-objective trainer, checkpointing as it
// goes, and records the run and its per-epoch metrics in the results database.
#include "core/layers/size.h"
#include "core/training/experiment.h"
#include "core/training/trainer.h"
#include "core/util/error.h"
#include "core/util/memory.h"
#include "search/cli/command.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

namespace comera::cli {
namespace {

int run(int argc, char** argv) {
  auto options = make_options(
      "train",
      "Train an experiment (model, training and data settings in one JSON file) with the\n"
      "bi-objective rank-adaptive trainer. Checkpoints at every epoch end; --resume continues a\n"
      "stopped or killed run from its checkpoint.");
  options.add_options()("config", "Experiment file, e.g. experiments/mnli_six_encoder.json",
                        cxxopts::value<std::string>())(
      "data", "Folder with the train/eval files (overrides data.dir)", cxxopts::value<std::string>())(
      "db", "Results database", cxxopts::value<std::string>()->default_value("results/comera.db"))(
      "no-db", "Do not record the run")(
      "checkpoint", "Checkpoint file (default results/checkpoints/<name>.pt)",
      cxxopts::value<std::string>())(
      "resume", "Continue from the checkpoint when there is one")(
      "max-steps", "Stop the run after this many optimiser steps (training.max_steps)",
      cxxopts::value<int64_t>())(
      "epochs", "Override training.epochs", cxxopts::value<int64_t>())(
      "seed", "Override training.seed", cxxopts::value<uint64_t>())(
      "train-limit", "Use only the first N training examples", cxxopts::value<int64_t>())(
      "eval-limit", "Use only the first N evaluation examples", cxxopts::value<int64_t>())(
      "dense", "Train the same architecture with every layer dense (the baseline)")(
      "quiet", "No progress line")(
      "json", "Print the run's result and per-epoch metrics as JSON");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  if (!r.count("config"))
    throw Error("give --config (e.g. comera train --config experiments/mnli_six_encoder.json)");
  const int64_t baseline = current_rss_bytes();

  auto e = load_experiment(r["config"].as<std::string>());
  if (r.count("data")) e.data.dir = r["data"].as<std::string>();
  if (r.count("max-steps")) e.training.max_steps = r["max-steps"].as<int64_t>();
  if (r.count("epochs")) e.training.epochs = r["epochs"].as<int64_t>();
  if (r.count("seed")) e.training.seed = r["seed"].as<uint64_t>();
  if (r.count("train-limit")) e.data.train_limit = r["train-limit"].as<int64_t>();
  if (r.count("eval-limit")) e.data.eval_limit = r["eval-limit"].as<int64_t>();
  if (r.count("dense")) {
    e.model = e.model.dense();
    e.name += "_dense";
  }

  std::cerr << "loading data..." << std::endl;
  const auto data = load_task_data(e.data);
  if (data.vocab_size > e.model.vocab)
    throw Error("the vocabulary has " + std::to_string(data.vocab_size) +
                " tokens but model.vocab is " + std::to_string(e.model.vocab) +
                " (raise model.vocab to at least the vocabulary size)");
  std::cerr << "data: " << data.train.size() << " training pairs (" << data.train_file << "), "
            << data.eval.size() << " evaluation pairs (" << data.eval_file << ")" << std::endl;

  TrainerOptions to;
  to.checkpoint = r.count("checkpoint") ? r["checkpoint"].as<std::string>()
                                        : "results/checkpoints/" + e.name + ".pt";
  to.resume = r.count("resume") > 0;
  to.progress = !r.count("quiet");
  to.memory_baseline = baseline;
  Trainer trainer(e.model, e.training, data.train, data.eval, to);
  const auto size = model_size(*trainer.model());
  std::cerr << "model: " << e.model.layers << " layers, d_model " << e.model.d_model << ", "
            << size.total_params << " parameters (" << size.megabytes() << " MB), "
            << size.compression() << "x smaller than dense (" << size.dense_model_params << ")"
            << (trainer.resumed() ? "; resumed at step " + std::to_string(trainer.state().step) : "")
            << std::endl;

  const auto result = trainer.run();
  std::cerr << run_status_name(result.status) << ": " << result.message << std::endl;
  if (r.count("json")) {
    nlohmann::json epochs = nlohmann::json::array();
    for (const auto& m : result.epochs) epochs.push_back(m.to_json());
    std::cout << nlohmann::json{{"experiment", e.to_json()},
                                {"status", run_status_name(result.status)},
                                {"message", result.message},
                                {"steps", result.steps},
                                {"checkpoint", to.checkpoint},
                                {"epochs", epochs}}
                     .dump(2)
              << std::endl;
  }
  return result.status == RunStatus::Diverged ? 3 : 0;
}

Register reg("train", "Train an experiment config (bi-objective, rank-adaptive)", run);

}  // namespace
}  // namespace comera::cli
