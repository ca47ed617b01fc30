// `comera train`: trains an experiment config with the bi-objective trainer, checkpointing as it
// goes, and records the run and its per-epoch metrics in the results database.
#include "core/layers/size.h"
#include "core/training/experiment.h"
#include "core/training/trainer.h"
#include "core/util/device.h"
#include "core/util/error.h"
#include "core/util/memory.h"
#include "search/cli/command.h"
#include "search/cli/db_option.h"
#include "search/environment.h"
#include "search/store/trials.h"
#include "search/runs/trial_recorder.h"
#include "search/cli/training_output.h"
#include "search/tuner/tuner.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

namespace comera::cli {
namespace {

// The trial a checkpoint belongs to, kept beside it so that --resume continues that trial.
struct TrialLink {
  std::string db;
  int64_t trial = 0;
};

std::string link_file(const std::string& checkpoint) { return checkpoint + ".trial.json"; }

std::optional<TrialLink> read_link(const std::string& checkpoint) {
  std::ifstream in(link_file(checkpoint));
  if (!in) return std::nullopt;
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object() || !j.contains("db") || !j.contains("trial")) return std::nullopt;
  return TrialLink{j["db"].get<std::string>(), j["trial"].get<int64_t>()};
}

void write_link(const std::string& checkpoint, const TrialLink& link) {
  std::filesystem::create_directories(std::filesystem::absolute(checkpoint).parent_path());
  std::ofstream(link_file(checkpoint)) << nlohmann::json{{"db", link.db}, {"trial", link.trial}}.dump();
}

// Stable across restarts of the same run, so a resumed process may finish its trial.
std::string worker_id(const std::string& checkpoint) {
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  return std::string(host.data()) + ":train:" + std::filesystem::absolute(checkpoint).string();
}

int run(int argc, char** argv) {
  auto options = make_options(
      "train",
      "Train an experiment (model, training and data settings in one JSON file) with the\n"
      "bi-objective rank-adaptive trainer. Checkpoints at every epoch end; --resume continues a\n"
      "stopped or killed run from its checkpoint (and its trial in the database).");
  options.add_options()("config", "Experiment file, e.g. experiments/mnli_six_encoder.json",
                        cxxopts::value<std::string>())(
      "data", "Folder with the train/eval files (overrides data.dir)", cxxopts::value<std::string>())(
      "init", "Checkpoint whose embeddings and encoders start the run, e.g. of a masked-LM "
      "pre-training run (overrides training.init_from; with --dense, X.pt in the config means "
      "X_dense.pt)", cxxopts::value<std::string>())(
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
      "tune", "Measure contraction plans that the database has no choice for (else only stored "
              "choices are used, from `comera tune`)")(
      "device", "Where to compute: cpu, cuda or cuda:N (overrides training.device)",
      cxxopts::value<std::string>())(
      "quiet", "No live progress line (epoch summaries are still printed)")(
      "json", "Print the run's result and per-epoch metrics as JSON");
  add_db_option(options);
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  if (!r.count("config"))
    throw Error("give --config (e.g. comera train --config experiments/mnli_six_encoder.json)");
  const int64_t baseline = idle_rss_bytes();

  auto e = load_experiment(r["config"].as<std::string>());
  if (r.count("data")) e.data.dir = r["data"].as<std::string>();
  if (r.count("max-steps")) e.training.max_steps = r["max-steps"].as<int64_t>();
  if (r.count("epochs")) e.training.epochs = r["epochs"].as<int64_t>();
  if (r.count("seed")) e.training.seed = r["seed"].as<uint64_t>();
  if (r.count("train-limit")) e.data.train_limit = r["train-limit"].as<int64_t>();
  if (r.count("eval-limit")) e.data.eval_limit = r["eval-limit"].as<int64_t>();
  if (r.count("device")) e.training.device = parse_device(r["device"].as<std::string>()).str();
  if (r.count("dense")) {
    e.model = e.model.dense();
    e.name += "_dense";
    if (!e.training.init_from.empty())
      e.training.init_from = dense_checkpoint_path(e.training.init_from);
  }
  if (r.count("init")) e.training.init_from = r["init"].as<std::string>();

  require_device(parse_device(e.training.device, "training.device"));
  std::cerr << "loading data..." << std::endl;
  auto data = load_task_data(e.data);
  std::cerr << "data: " << data.train->size() << " training " << data.train->unit() << " ("
            << data.train_file << "), " << data.eval->size() << " evaluation " << data.eval->unit()
            << " (" << data.eval_file << ")" << std::endl;

  TrainerOptions to;
  to.checkpoint = r.count("checkpoint") ? r["checkpoint"].as<std::string>()
                                        : "results/checkpoints/" + e.name + ".pt";
  to.resume = r.count("resume") > 0;
  to.memory_baseline = baseline;
  // The trial is made once the trainer is built (a bad config or checkpoint makes none).
  std::unique_ptr<store::ResultsDb> db;
  std::unique_ptr<TrialRecorder> recorder;
  // Contraction plans per TT layer; set again after steps and epochs, where truncation may
  // have shrunk ranks (cheap: choices are cached per key).
  std::function<void()> plan_layers;
  to.on_epoch = [&](const EpochMetrics& m) {
    if (recorder) recorder->epoch(m);
    if (plan_layers) plan_layers();
  };
  to.on_step = [&] {
    if (recorder) recorder->heartbeat();
    if (plan_layers) plan_layers();
  };
  ProgressLine line(!r.count("quiet"), true);
  show_training(to, line);
  Trainer trainer(e.model, e.training, std::move(data), to);
  const auto size = model_size(trainer.model());
  std::cerr << "model: " << e.model.kind << ", " << e.model.summary() << ", "
            << size.total_params << " parameters (" << size.megabytes() << " MB), "
            << size.compression() << "x smaller than dense (" << size.dense_model_params << ")"
            << (trainer.resumed() ? "; resumed at step " + std::to_string(trainer.state().step) : "")
            << "; on " << trainer.device()
            << std::endl;
  if (trainer.finished()) {
    std::cerr << "nothing to do: the run in " << to.checkpoint
              << " has already ended (raise --epochs or --max-steps to go on)" << std::endl;
    return 0;
  }

  if (!r.count("no-db")) {
    db = std::make_unique<store::ResultsDb>(store::ResultsDb::open(db_path(r)));
    const auto worker = worker_id(to.checkpoint);
    auto link = trainer.resumed() ? read_link(to.checkpoint) : std::nullopt;
    // Continue the checkpoint's trial unless it has ended (a run taken further is a new trial).
    const auto linked = link && link->db == std::filesystem::absolute(db->path()).string()
                            ? store::load_trial(*db, link->trial)
                            : std::nullopt;
    if (!linked || (linked->state != store::TrialState::Running &&
                    linked->state != store::TrialState::Failed)) {
      const auto trial = store::start_run(*db, trial_config(e.to_json(), e.training.seed), worker,
                                          current_environment());
      link = TrialLink{std::filesystem::absolute(db->path()).string(), trial.id};
      write_link(to.checkpoint, *link);
    }
    recorder = std::make_unique<TrialRecorder>(*db, link->trial, worker);
    std::cerr << "recording as trial " << link->trial << " in " << db->path() << std::endl;
  }
  tuner::TunerOptions topts;
  topts.measure_missing = r.count("tune") > 0;
  tuner::Tuner plans(topts, db.get(), current_environment());
  plans.set_progress([](const std::string& what) { std::cerr << "  " << what << std::endl; });
  int planned = 0;
  plan_layers = [&] {
    planned = plans.apply(trainer.model(), [&](const std::string& layer) {
      return trainer.task().layer_rows(layer, e.training.batch_size, e.data.max_length);
    });
  };
  plan_layers();
  std::cerr << "contraction plans: " << planned << " TT layers off the merged path ("
            << (topts.measure_missing ? "measured where not stored" : "stored choices only") << ")"
            << std::endl;

  RunResult result;
  try {
    result = trainer.run();
  } catch (const std::exception& ex) {
    if (recorder) recorder->fail(error_message(ex));
    throw;
  }
  if (recorder) recorder->finish(result);
  std::cerr << run_status_name(result.status) << ": " << result.message << std::endl;
  if (r.count("json")) {
    nlohmann::json epochs = nlohmann::json::array();
    for (const auto& m : result.epochs) epochs.push_back(m.to_json());
    std::cout << nlohmann::json{{"experiment", e.to_json()},
                                {"status", run_status_name(result.status)},
                                {"message", result.message},
                                {"steps", result.steps},
                                {"checkpoint", to.checkpoint},
                                {"trial", recorder ? recorder->trial_id() : 0},
                                {"epochs", epochs}}
                     .dump(2)
              << std::endl;
  }
  return result.status == RunStatus::Diverged ? 3 : 0;
}

Register reg("train", "Train an experiment config (bi-objective, rank-adaptive)", run);

}  // namespace
}  // namespace comera::cli
