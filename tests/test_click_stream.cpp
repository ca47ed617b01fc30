// Click logs trained on from their file (data.criteo.stream): against the in-memory dataset of
// the same lines (the same batches in file order, every line once per shuffled epoch, the same
// evaluation), the shuffle buffer's bound checked line by line, and a resumed run against an
// uninterrupted one.
#include "core/data/click_stream.h"
#include "core/data/task_data.h"
#include "core/models/model_kind.h"
#include "core/training/method.h"
#include "core/training/trainer.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "tests/support/catch.h"
#include "tests/support/same_parameters.h"
#include "tests/support/temp_dir.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace comera;
using Catch::Matchers::Contains;
using comera::testing::TempDir;

namespace {

constexpr int64_t kRows = 1000;

// Line i: label 1 when i % 3 == 0, the first integer i, the first id i (so a line read back
// names itself), the other ids varied, a few fields empty.
void write_numbered_log(const std::string& path, int64_t lines, int64_t first = 0) {
  std::ofstream out(path);
  for (int64_t i = first; i < first + lines; ++i) {
    out << (i % 3 == 0 ? 1 : 0) << '\t' << i;
    for (int f = 1; f < 13; ++f) out << '\t' << (f % 4 == 0 ? "" : std::to_string((i * f) % 17));
    char hex[16];
    for (int t = 0; t < 26; ++t) {
      std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(t == 0 ? i : (i * 7 + t) % 997));
      out << '\t' << (t == 5 && i % 5 == 0 ? "" : hex);
    }
    out << '\n';
  }
}

// Train and eval logs of `train` and `eval` lines in dir/logs.
std::string write_logs(const TempDir& dir, int64_t train, int64_t eval) {
  const auto logs = dir.file("logs");
  std::filesystem::create_directories(logs);
  write_numbered_log(logs + "/train.txt", train);
  write_numbered_log(logs + "/eval.txt", eval, 500);
  return logs;
}

DataConfig click_config(const std::string& logs, bool stream, int64_t buffer = 16) {
  nlohmann::json j = {{"format", "criteo"}, {"dir", logs},
                      {"criteo", {{"table_sizes", std::vector<int64_t>(26, kRows)}, {"stream", stream}}}};
  if (stream) j["criteo"]["shuffle_buffer"] = buffer;
  return read_data_config(ConfigReader(j, "data"));
}

std::vector<Batch> read_batches(const Dataset& data, int64_t batch_size, std::optional<uint64_t> seed,
                                int64_t skip = 0) {
  const auto stream = data.batches(batch_size, seed, skip);
  std::vector<Batch> out;
  Batch b;
  while (stream->next(b)) out.push_back(b);
  return out;
}

// The line numbers (the first id) of batches, in order.
std::vector<int64_t> line_numbers(const std::vector<Batch>& batches) {
  std::vector<int64_t> out;
  for (const auto& b : batches) {
    const auto ids = b.at("sparse").select(1, 0);
    for (int64_t i = 0; i < ids.size(0); ++i) out.push_back(ids[i].item<int64_t>());
  }
  return out;
}

at::Tensor cat(const std::vector<Batch>& batches, const std::string& key) {
  std::vector<at::Tensor> parts;
  for (const auto& b : batches) parts.push_back(b.at(key));
  return at::cat(parts);
}

ModelSpec tiny_dlrm() {
  TaskSpec ctr;
  ctr.kind = "ctr";
  return parse_model_spec({{"kind", "dlrm"},        {"dense_features", 13},
                           {"embedding_dim", 4},    {"bottom_mlp", {8, 4}},
                           {"top_mlp", {6, 1}},     {"table_sizes", std::vector<int64_t>(26, kRows)},
                           {"tensorized", {{"tables", {{"min_rows", 500}, {"cores", 2}, {"ranks", 3}}}}}},
                          ctr);
}

TrainConfig tiny_training() {
  TrainConfig c;
  c.task.kind = "ctr";
  c.epochs = 2;
  c.batch_size = 16;
  c.eval_batch_size = 32;
  c.seed = 3;
  c.optimizer.kind = "adagrad";
  c.optimizer.lr_cores = c.optimizer.lr_other = 0.05;
  c.truncation.when = TruncateWhen::Never;
  return c;
}

}  // namespace

TEST_CASE("a streamed click log reads the in-memory dataset's lines, each once per epoch", "[criteo]") {
  TempDir dir;
  const auto logs = write_logs(dir, 200, 40);
  const auto memory = load_task_data(click_config(logs, false));
  const auto streamed = load_task_data(click_config(logs, true));
  REQUIRE(dynamic_cast<const ClickStreamDataset*>(streamed.train.get()) != nullptr);
  CHECK(streamed.train->size() == 200);
  CHECK(streamed.eval->size() == 40);
  CHECK(streamed.train->unit() == "click lines");

  // In file order: the in-memory batches exactly, the last one short.
  const auto plain = read_batches(*streamed.train, 32, std::nullopt);
  REQUIRE(plain.size() == 7);
  CHECK(plain.back().examples() == 8);
  std::vector<int64_t> all(200);
  for (int64_t i = 0; i < 200; ++i) all[static_cast<size_t>(i)] = i;
  const auto whole = memory.train->batch(all);
  for (const auto* key : {"dense", "sparse", "labels"}) CHECK(at::equal(cat(plain, key), whole.at(key)));

  // Shuffled: a permutation of the lines, the same per seed, and no line leaves before the
  // buffer (16 lines) has reached it.
  const auto a = line_numbers(read_batches(*streamed.train, 32, 9));
  CHECK(a == line_numbers(read_batches(*streamed.train, 32, 9)));
  CHECK(a != line_numbers(read_batches(*streamed.train, 32, 10)));
  CHECK(a != all);
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == all);
  bool bounded = true;
  for (size_t p = 0; p < a.size(); ++p) bounded &= a[p] < static_cast<int64_t>(p) + 16;
  CHECK(bounded);

  // Skipping k batches (a resume) continues with the k-th batch of the same order.
  const auto rest = line_numbers(read_batches(*streamed.train, 32, 9, 3));
  CHECK(rest == std::vector<int64_t>(a.begin() + 96, a.end()));

  // Streamed examples have no index; a limit shortens the epoch.
  CHECK_THROWS_WITH(streamed.train->batch({0}), Contains("read in order"));
  auto limited = click_config(logs, true);
  limited.train_limit = 50;
  const auto fifty = load_task_data(limited);
  CHECK(fifty.train->size() == 50);
  CHECK(line_numbers(read_batches(*fifty.train, 32, 4)).size() == 50);
}

TEST_CASE("a streamed click log skipping malformed lines counts them first: epochs as long as said, an "
          "all-malformed split refused", "[criteo]") {
  TempDir dir;
  const auto logs = write_logs(dir, 40, 12);
  {
    std::ofstream bad(logs + "/train.txt", std::ios::app);
    for (int i = 0; i < 5; ++i) bad << "1\tnot a click line\n";
    bad << "\n";
  }
  auto config = click_config(logs, true);
  config.settings["criteo"]["skip_malformed"] = true;
  const auto data = load_task_data(config);
  CHECK(data.train->size() == 40);
  CHECK(line_numbers(read_batches(*data.train, 16, 5)).size() == 40);
  REQUIRE(data.notes.size() == 1);
  CHECK_THAT(data.notes[0], Contains("6 malformed click lines skipped (the first: ") && Contains("train.txt:41: "));
  // The blank line is named as such when not skipped.
  config.settings["criteo"]["skip_malformed"] = false;
  std::ofstream(logs + "/eval.txt") << "\n";
  CHECK_THROWS_WITH(load_task_data(config).eval->batches(4, std::nullopt, 0)->next(*std::make_unique<Batch>()),
                    Contains("eval.txt:1: an empty line") && Contains("data.criteo.skip_malformed"));
  // Every evaluation line malformed: an empty split, which a trainer refuses.
  config.settings["criteo"]["skip_malformed"] = true;
  CHECK(load_task_data(config).eval->size() == 0);
}

TEST_CASE("data.criteo.stream and shuffle_buffer are read and checked", "[criteo]") {
  const auto c = click_config("x", true, 64);
  CHECK(c.settings["criteo"]["stream"] == true);
  CHECK(c.settings["criteo"]["shuffle_buffer"] == 64);
  nlohmann::json j = {{"format", "criteo"}, {"dir", "x"}, {"criteo", {{"shuffle_buffer", 64}}}};
  CHECK_THROWS_WITH(read_data_config(ConfigReader(j, "data")),
                    Contains("data.criteo.shuffle_buffer: only read when streaming"));
  j["criteo"] = {{"stream", true}, {"shuffle_buffer", 0}};
  CHECK_THROWS_WITH(read_data_config(ConfigReader(j, "data")), Contains("data.criteo.shuffle_buffer"));
}

TEST_CASE("training from the stream: the in-memory run's steps and evaluation, resumable mid-epoch",
          "[criteo]") {
  TempDir dir;
  const auto logs = write_logs(dir, 200, 40);  // 13 batches of 16 per epoch
  const auto streamed = load_task_data(click_config(logs, true));
  const auto memory = load_task_data(click_config(logs, false));

  TrainerOptions options;
  options.checkpoint = dir.file("full.pt");
  Trainer full(tiny_dlrm(), tiny_training(), streamed, options);
  const auto a = full.run();
  REQUIRE(a.status == RunStatus::Completed);
  CHECK(a.steps == 26);
  REQUIRE(a.epochs.size() == 2);
  CHECK(a.epochs[0].eval_metrics.count("auc") == 1);
  {
    Trainer in_memory(tiny_dlrm(), tiny_training(), memory, {});
    CHECK(in_memory.run().steps == 26);
  }
  // The streamed evaluation set gives the in-memory one's figures for the same model.
  const auto on_stream = evaluate(full.task(), *streamed.eval, 32, full.device());
  const auto on_memory = evaluate(full.task(), *memory.eval, 32, full.device());
  CHECK(on_stream.loss == on_memory.loss);
  CHECK(on_stream.accuracy == on_memory.accuracy);
  CHECK(on_stream.metrics.at("auc") == on_memory.metrics.at("auc"));

  // Stopped inside either epoch, then resumed: exactly the uninterrupted run.
  for (const int64_t stop : {5, 17}) {
    INFO("stopped at step " << stop);
    const auto path = dir.file("stop" + std::to_string(stop) + ".pt");
    {
      TrainerOptions first;
      first.checkpoint = path;
      first.stop_at_step = stop;
      Trainer t(tiny_dlrm(), tiny_training(), streamed, first);
      CHECK(t.run().status == RunStatus::StepLimit);
    }
    TrainerOptions second;
    second.checkpoint = path;
    second.resume = true;
    Trainer t(tiny_dlrm(), tiny_training(), streamed, second);
    CHECK(t.state().step == stop);
    const auto r = t.run();
    CHECK(r.status == RunStatus::Completed);
    CHECK(r.steps == 26);
    comera::testing::check_same_parameters(full.model(), t.model());
    CHECK(r.epochs.back().eval_loss == a.epochs.back().eval_loss);
  }
  // Another shuffle buffer would reorder the rest of the epoch: refused, naming both.
  {
    TrainerOptions first;
    first.checkpoint = dir.file("buffer.pt");
    first.stop_at_step = 5;
    Trainer(tiny_dlrm(), tiny_training(), streamed, first).run();
    TrainerOptions second = first;
    second.resume = true;
    const auto rebuffered = load_task_data(click_config(logs, true, 32));
    CHECK_THROWS_WITH(Trainer(tiny_dlrm(), tiny_training(), rebuffered, second),
                      Contains("shuffle buffer 16 lines") && Contains("shuffle buffer 32 lines") &&
                          Contains("data.criteo.shuffle_buffer"));
  }
}

TEST_CASE("a DLRM run refuses what only sequence models have, naming it, before training", "[criteo]") {
  TempDir dir;
  const auto logs = write_logs(dir, 40, 10);
  auto phased = tiny_training();
  phased.length_phases = {{0, 0, 8}};
  CHECK_THROWS_WITH(Trainer(tiny_dlrm(), phased, load_task_data(click_config(logs, false)), {}),
                    Contains("training.length_phases: a dlrm model's batches have no token sequences"));
  // A baseline method is a request the model kind carries out; the DLRM has none.
  auto experiment = nlohmann::json{{"method", "lowrank"}, {"model", tiny_dlrm().to_json()}};
  CHECK_THROWS_WITH(apply_method(experiment), Contains("method: lowrank: a dlrm model has no baseline methods"));
}

TEST_CASE("an evaluation set of one label is refused before training: its AUC is undefined", "[criteo]") {
  TempDir dir;
  const auto logs = write_logs(dir, 40, 10);
  auto data = load_task_data(click_config(logs, false));
  // Keep the evaluation examples of label 0 only.
  std::vector<int64_t> negatives;
  const auto all = data.eval->batch([&] {
    std::vector<int64_t> ids(static_cast<size_t>(data.eval->size()));
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i);
    return ids;
  }());
  for (int64_t i = 0; i < all.at("labels").size(0); ++i)
    if (all.at("labels")[i].item<double>() < 0.5) negatives.push_back(i);
  REQUIRE(!negatives.empty());
  REQUIRE(negatives.size() < static_cast<size_t>(data.eval->size()));
  struct Subset : Dataset {
    std::shared_ptr<const Dataset> whole;
    std::vector<int64_t> keep;
    int64_t size() const override { return static_cast<int64_t>(keep.size()); }
    Batch batch(const std::vector<int64_t>& indices) const override {
      std::vector<int64_t> mapped;
      for (const auto i : indices) mapped.push_back(keep[static_cast<size_t>(i)]);
      return whole->batch(mapped);
    }
    std::string unit() const override { return whole->unit(); }
  };
  auto only_zeros = std::make_shared<Subset>();
  only_zeros->whole = data.eval;
  only_zeros->keep = negatives;
  data.eval = only_zeros;
  CHECK_THROWS_WITH(Trainer(tiny_dlrm(), tiny_training(), data, {}),
                    Contains("are all non-clicks (label 0): its AUC is undefined"));
}
