// `comera train`: trains an experiment config with the bi-objective trainer, checkpointing as it
// goes, and records the run and its per-epoch metrics in the results database.
#include "core/distributed/data_parallel.h"
#include "core/distributed/world.h"
#include "core/layers/size.h"
#include "core/training/checkpoint.h"
#include "core/training/experiment.h"
#include "core/training/method.h"
#include "core/util/config_reader.h"
#include "core/util/device.h"
#include "core/util/error.h"
#include "core/util/memory.h"
#include "core/util/output_file.h"
#include "core/util/threads.h"
#include "search/cli/command.h"
#include "search/cli/db_option.h"
#include "search/cli/stop_signals.h"
#include "search/cli/rank_launcher.h"
#include "search/cli/training_output.h"
#include "search/runs/recorded_run.h"
#include "search/runs/trial_config.h"
#include "search/runs/trial_link.h"
#include "search/runs/trial_recorder.h"
#include "search/store/trial_queue.h"
#include "search/store/trials.h"
#include "search/store/canonical_json.h"
#include "search/sweep/sweep_spec.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

namespace comera::cli {
namespace {

// Where the ranks other than 0 send what rank 0 alone reports.
std::ostream& null_stream() {
  static std::ostream discard(nullptr);
  return discard;
}

// The experiment file with the command line's overrides, read through the file's own checks:
// an override that the file could not hold ("--epochs 0") is the same error, naming the flag.
// Ranks by layer from FILE: a `comera train --json` result (its last epoch's layers) or an
// object {"layer": [1, r1, ..., 1]}.
nlohmann::json fixed_ranks_from(const std::string& file) {
  const auto j = read_json_file(file);
  if (j.is_object() && j.contains("epochs") && j["epochs"].is_array() && !j["epochs"].empty()) {
    nlohmann::json ranks = nlohmann::json::object();
    for (const auto& layer : j["epochs"].back().value("layers", nlohmann::json::array()))
      ranks[layer.at("name").get<std::string>()] = layer.at("ranks");
    if (ranks.empty()) throw Error("--fixed-ranks " + file + ": its last epoch lists no tensorized layers");
    return ranks;
  }
  if (!j.is_object() || j.empty())
    throw Error("--fixed-ranks " + file + ": give a `comera train --json` result or an object of "
                "{\"layer\": [1, r1, ..., 1]}");
  return j;
}

ExperimentConfig experiment_with_overrides(const cxxopts::ParseResult& r) {
  const auto file = r["config"].as<std::string>();
  auto json = read_json_file(file);
  std::string flags;
  auto set = [&](const char* flag, const std::string& path, const nlohmann::json& value) {
    sweep::set_path(json, path, value);
    flags += std::string(flags.empty() ? "" : " ") + "--" + flag + " " +
             (value.is_string() ? value.get<std::string>() : value.dump());
  };
  if (r.count("data")) set("data", "data.dir", r["data"].as<std::string>());
  if (r.count("max-steps")) set("max-steps", "training.max_steps", r["max-steps"].as<int64_t>());
  if (r.count("epochs")) set("epochs", "training.epochs", r["epochs"].as<int64_t>());
  if (r.count("seed")) set("seed", "training.seed", r["seed"].as<int64_t>());
  if (r.count("train-limit")) set("train-limit", "data.train_limit", r["train-limit"].as<int64_t>());
  if (r.count("eval-limit")) set("eval-limit", "data.eval_limit", r["eval-limit"].as<int64_t>());
  if (r.count("device")) set("device", "training.device", r["device"].as<std::string>());
  if (r.count("tune")) set("tune", "training.contraction", "tuned");
  if (r.count("precision")) set("precision", "training.precision", r["precision"].as<std::string>());
  if (r.count("nproc")) set("nproc", "training.nproc", r["nproc"].as<int64_t>());
  if (r.count("dense")) {
    json = dense_build(std::move(json));
    flags += std::string(flags.empty() ? "" : " ") + "--dense";
  }
  if (r.count("fixed-ranks")) {
    // The ablation against rank adaptation: these ranks from the start, kept to the end.
    const auto ranks_file = r["fixed-ranks"].as<std::string>();
    sweep::set_path(json, "training.fixed_ranks", fixed_ranks_from(ranks_file));
    sweep::set_path(json, "training.early_stage.gamma", 0);
    sweep::set_path(json, "training.truncation.when", "never");
    sweep::set_path(json, "training.optimizer.lr_ranks", 0);
    json["training"].erase("late_stage");
    flags += std::string(flags.empty() ? "" : " ") + "--fixed-ranks " + ranks_file;
  }
  try {
    return parse_experiment(json, file);
  } catch (const Error& e) {
    if (flags.empty()) throw;
    throw Error(std::string(e.what()) + " (with the command line's " + flags + ")");
  }
}

// Each config (seed included) has its own default checkpoint, so runs of one file with other
// settings never share one.
std::string default_checkpoint(const ExperimentConfig& e) {
  auto identity = e.to_json();
  identity["training"].erase("device");  // a run may resume on another device
  return "results/checkpoints/" + e.name + "-" + store::config_hash(identity).substr(0, 12) + ".pt";
}

// Before any work: the checkpoint the run writes is none of the files it reads nor a database,
// and one that holds a run is gone on from (--resume), never silently started over.
void check_checkpoint(const std::string& checkpoint, const cxxopts::ParseResult& r, const ExperimentConfig& e) {
  std::vector<std::string> reads = {r["config"].as<std::string>()};
  if (!r.count("no-db")) reads.push_back(db_path(r));
  if (!e.training.init_from.empty()) reads.push_back(e.training.init_from);
  if (r.count("fixed-ranks")) reads.push_back(r["fixed-ranks"].as<std::string>());
  OutputFile(checkpoint, "--checkpoint", reads);
  if (r.count("resume") || !std::filesystem::exists(checkpoint)) return;
  std::string held = "exists and is not a comera checkpoint: give another --checkpoint (or delete it)";
  try {
    const auto& state = Checkpoint(checkpoint).state();
    const auto& t = e.training;
    held = state.epoch >= t.epochs || (t.max_steps > 0 && state.step >= t.max_steps)
               ? "holds a run that ended at step " + std::to_string(state.step) +
                     ": give another --checkpoint (or delete it) to train again"
               : "holds a run stopped at step " + std::to_string(state.step) + " (in epoch " +
                     std::to_string(state.epoch + 1) + " of " + std::to_string(t.epochs) +
                     "): add --resume to go on from it, or give another --checkpoint (or delete it) to start afresh";
  } catch (const Error&) {
  }
  throw Error("--checkpoint " + checkpoint + " " + held);
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
      "stopped or killed run from its checkpoint (and its trial in the database). SIGINT, SIGTERM\n"
      "and a closed output pipe stop the run at its next step with a checkpoint, resumable.");
  options.add_options()("config", "Experiment file, e.g. experiments/mnli_six_encoder.json",
                        cxxopts::value<std::string>())(
      "data", "Folder with the train/eval files (overrides data.dir)", cxxopts::value<std::string>())(
      "init", "Checkpoint whose embeddings and encoders start the run, e.g. of a masked-LM "
      "pre-training run (overrides training.init_from; with --dense, X.pt in the config means "
      "X_dense.pt)", cxxopts::value<std::string>())(
      "no-db", "Do not record the run")(
      "checkpoint", "Checkpoint file (default results/checkpoints/<name>-<config hash>.pt, one "
      "per config and seed)", cxxopts::value<std::string>())(
      "resume", "Continue from the checkpoint when there is one")(
      "max-steps", "Stop the run after this many optimiser steps (training.max_steps; 0: no limit)",
      cxxopts::value<int64_t>())(
      "epochs", "Override training.epochs", cxxopts::value<int64_t>())(
      "seed", "Override training.seed", cxxopts::value<int64_t>())(
      "train-limit", "Use only the first N training examples (data.train_limit; CodeSearchNet: per language)", cxxopts::value<int64_t>())(
      "eval-limit", "Use only the first N evaluation examples (data.eval_limit; CodeSearchNet: per language)", cxxopts::value<int64_t>())(
      "dense", "Train the same architecture with every layer dense (the baseline), at the rates of "
                "method_settings.dense.optimizer where the experiment gives them")(
      "fixed-ranks", "Start every tensorized layer at these ranks and keep them (no size terms, no late stage, "
                     "no truncation): FILE is a `comera train --json` result (its last epoch's ranks) or "
                     "{\"layer\": [1, r1, ..., 1]}. The ablation against rank adaptation",
      cxxopts::value<std::string>())(
      "tune", "Measure contraction plans that the database has no choice for "
              "(training.contraction tuned; else stored choices from `comera tune`)")(
      "device", "Where to compute: cpu, cuda or cuda:N (overrides training.device)",
      cxxopts::value<std::string>())(
      "precision", "fp32, or bf16 mixed precision: matmuls and activations in bfloat16, weights, "
                   "optimiser state and loss in float32; CPU only (overrides training.precision)",
      cxxopts::value<std::string>())(
      "quiet", "No live progress line (epoch summaries are still printed)")(
      "nproc", "Data-parallel ranks to start on this host (training.nproc; c10d Gloo on "
      "127.0.0.1, --threads each, default the cores shared out). Under torchrun or srun "
      "(RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set) this process is one rank instead",
      cxxopts::value<int64_t>())(
      "timeout", "Seconds a data-parallel rank waits for the others (rendezvous, each "
      "collective) before it ends with an error naming the lost rank",
      cxxopts::value<int>()->default_value("300"))(
      "stop-at", "Stop (resumably) once this many steps are done in total; unlike --max-steps "
      "the run keeps its config, so --resume goes on with the same learning-rate schedule",
      cxxopts::value<int64_t>())(
      "trial", "Record into this trial of the database, already claimed by --worker (what a "
      "sweep worker passes when it launches a multi-rank trial)", cxxopts::value<int64_t>())(
      "worker", "The worker holding --trial", cxxopts::value<std::string>())(
      "json", "Print the run's result and per-epoch metrics as JSON");
  add_db_option(options);
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  if (!r.count("config"))
    throw Error("give --config (e.g. comera train --config experiments/mnli_six_encoder.json)");
  if (r.count("stop-at") && r["stop-at"].as<int64_t>() < 1)
    throw Error("--stop-at " + std::to_string(r["stop-at"].as<int64_t>()) +
                ": give the step to stop at, at least 1");
  const int64_t baseline = idle_rss_bytes();

  auto e = experiment_with_overrides(r);
  if (r.count("dense")) e.name += "_dense";
  if (r.count("fixed-ranks")) {
    if (r.count("dense") || r.count("init"))
      throw Error("--fixed-ranks starts a tensorized model afresh at its ranks: leave out --dense and --init");
    e.name += "_fixed_ranks";
  }
  if (r.count("init")) e.training.init_from = r["init"].as<std::string>();
  require_device(parse_device(e.training.device, "training.device"));
  if (r.count("trial") != r.count("worker")) throw Error("give --trial and --worker together");
  const int timeout_s = r["timeout"].as<int>();
  if (timeout_s < 1) throw Error("--timeout " + std::to_string(timeout_s) + ": give at least 1 second");
  const std::string checkpoint =
      r.count("checkpoint") ? r["checkpoint"].as<std::string>() : default_checkpoint(e);
  check_checkpoint(checkpoint, r, e);

  const auto world = world_from(process_environment());
  if (!world && e.training.nproc > 1) {
    if (!collectives_available())
      throw Error("training.nproc is " + std::to_string(e.training.nproc) +
                  " but this build has no c10d collectives: install libgloo-dev (scripts/setup.sh) "
                  "and rebuild, or train with one process");
    LaunchOptions launch;
    launch.argv = {argv[0], "train"};
    launch.argv.insert(launch.argv.end(), argv + 1, argv + argc);
    launch.nproc = static_cast<int>(e.training.nproc);
    const int asked = r["threads"].as<int>();
    launch.threads_per_rank = asked > 0 ? asked : std::max(1, available_cores() / launch.nproc);
    launch.grace = std::chrono::seconds(timeout_s + 30);
    launch.say = [](const std::string& text) { std::cerr << text << std::endl; };
    if (!r.count("no-db")) {
      // Rank 0 holds the record; killed, it leaves the trial running: marked failed, resumable.
      const auto db_file = db_path(r);
      const auto worker = r.count("worker") ? r["worker"].as<std::string>() : worker_id(checkpoint);
      const auto given = r.count("trial") ? std::optional<int64_t>(r["trial"].as<int64_t>()) : std::nullopt;
      launch.on_root_failed = [=](const std::string& how) {
        try {
          auto db = store::ResultsDb::open(db_file);
          auto trial = given;
          const auto link = read_trial_link(checkpoint);
          if (!trial && link && link->db == std::filesystem::absolute(db_file).string()) trial = link->trial;
          const auto held = trial ? store::load_trial(db, *trial) : std::nullopt;
          if (held && held->state == store::TrialState::Running && held->worker == worker)
            TrialRecorder(db, *trial, worker)
                .fail("rank 0 ended (" + how + ") without recording an outcome; --resume goes on from the checkpoint");
        } catch (const std::exception& ex) {
          std::cerr << "the run's trial could not be marked failed: " << error_message(ex) << std::endl;
        }
      };
    }
    stop_with_launcher();  // a sweep worker that launched this one and died takes it along
    return launch_local_ranks(launch);
  }
  if (world) stop_with_launcher();
  // Rank 0 (or the only process) records and reports; the other ranks train silently.
  const bool root = !world || world->is_root();
  std::unique_ptr<DataParallel> parallel;
  if (world) {
    if (root)
      std::cerr << "rank 0 of " << world->size << ": waiting for the ranks at " << world->master_addr
                << ":" << world->master_port << "..." << std::endl;
    parallel = std::make_unique<DataParallel>(*world, std::chrono::seconds(timeout_s));
  }
  std::ostream& out = root ? std::cerr : null_stream();
  // The database before the data and the model: a database that cannot be written fails now.
  std::unique_ptr<store::ResultsDb> db;
  if (!r.count("no-db") && root) db = std::make_unique<store::ResultsDb>(store::ResultsDb::open(db_path(r)));
  if (db && r.count("trial")) {
    const auto id = r["trial"].as<int64_t>();
    const auto& worker = r["worker"].as<std::string>();
    const auto held = store::load_trial(*db, id);
    if (!held)
      throw Error("--trial " + std::to_string(id) + ": no trial " + std::to_string(id) + " in " + db->path() +
                  " (give a trial that --worker claimed; `comera runs list` lists them)");
    if (held->state != store::TrialState::Running || held->worker != worker)
      throw Error("--trial " + std::to_string(id) + " is " + to_string(held->state) +
                  (held->worker.empty() ? "" : " (worker " + held->worker + ")") + ", not claimed by --worker " +
                  worker + ": a sweep worker passes the trial it claimed");
  }

  const bool resume = r.count("resume") > 0;
  if (resume && !std::filesystem::exists(checkpoint))
    out << "no checkpoint " << checkpoint << " of this config (its settings and seed): "
              << "starting a new run" << std::endl;

  out << "loading data..." << std::endl;
  auto data = load_task_data(e.data);
  out << describe_data(data) << std::endl;

  ProgressLine line(root && !r.count("quiet"), root);
  RecordedRunOptions ro;
  ro.checkpoint = checkpoint;
  ro.resume = resume;
  ro.memory_baseline = baseline;
  ro.stop = &stop_on_signals();
  ro.parallel = parallel.get();
  if (r.count("stop-at")) ro.stop_at_step = r["stop-at"].as<int64_t>();
  ro.configure_trainer = [&line](TrainerOptions& t) { show_training(t, line); };
  ro.on_message = [&line, root](const std::string& text) {
    if (root) line.finish(text);
  };
  // The trial is made once the trainer is built (a bad config or checkpoint makes none).
  RecordedRun run(e, std::move(data), ro, db.get());
  auto& trainer = run.trainer();
  const auto size = model_size(trainer.model());
  out << "model: " << e.model.kind << ", " << e.model.summary() << ", "
            << size.total_params << " parameters (" << size.megabytes() << " MB), "
            << size.compression() << "x smaller than dense (" << size.dense_model_params << ")"
            << (trainer.resumed() ? "; resumed at step " + std::to_string(trainer.state().step) : "")
            << "; on " << trainer.device() << " in " << precision_name(e.training.precision)
            << (world ? ", " + std::to_string(world->size) + " data-parallel ranks" : "") << std::endl;
  // A claimed trial whose run ended before its outcome was recorded gets it now (every rank
  // goes on, so none waits for another at the run's closing barrier).
  if (trainer.finished() && !r.count("trial")) {
    out << "nothing to do: the run in " << checkpoint << " has already ended" << std::endl;
    return 0;
  }
  if (trainer.finished())
    out << "the run in " << checkpoint << " has already ended: recording its outcome" << std::endl;

  int64_t trial_id = 0;
  if (db && r.count("trial")) {
    trial_id = r["trial"].as<int64_t>();
    run.record_in(*db, trial_id, r["worker"].as<std::string>());
  } else if (db) {
    const auto worker = worker_id(checkpoint);
    trial_id = link_trial(*db, trial_config(e.to_json(), e.training.seed), checkpoint, worker,
                          trainer.resumed(), e.training.device)
                   .id;
    run.record_in(*db, trial_id, worker);
    out << "recording as trial " << trial_id << " in " << db->path() << std::endl;
  }

  const RunResult result = run.run();
  out << run_status_name(result.status) << ": " << result.message << std::endl;
  if (r.count("json") && root) {
    nlohmann::json epochs = nlohmann::json::array();
    for (const auto& m : result.epochs) epochs.push_back(m.to_json());
    std::cout << nlohmann::json{{"experiment", e.to_json()},
                                {"status", run_status_name(result.status)},
                                {"message", result.message},
                                {"steps", result.steps},
                                {"checkpoint", checkpoint},
                                {"trial", trial_id},
                                {"epochs", epochs}}
                     .dump(2)
              << std::endl;
  }
  if (result.status == RunStatus::Interrupted) return signal_exit_code();
  return result.status == RunStatus::Diverged ? 3 : 0;
}

Register reg("train", "Train an experiment config (bi-objective, rank-adaptive)", run);

}  // namespace
}  // namespace comera::cli
