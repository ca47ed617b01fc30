// Data-parallel training (core/distributed): the launcher's environment, batch shards, flat
// gradient buckets against hand-computed sums, and whole runs through the CLI: 2 ranks x B/2
// against 1 rank x B through a truncation, the late stage and a checkpoint/resume, and a rank
// killed mid-run. Every process talks over 127.0.0.1 only, and every wait is bounded.
#include "core/data/dataset.h"
#include "core/distributed/collective.h"
#include "core/distributed/data_parallel.h"
#include "core/distributed/gradient_buckets.h"
#include "core/distributed/world.h"
#include "core/training/checkpoint.h"
#include "core/training/experiment.h"
#include "core/training/trainer.h"
#include "core/util/error.h"
#include "core/util/source_dir.h"
#include "search/bench/all_reduce_projection.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"

#include <ATen/ATen.h>
#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <torch/nn/module.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <tuple>

using namespace comera;
using Catch::Matchers::Contains;

TEST_CASE("the world comes from torchrun's variables, or srun's", "[data_parallel]") {
  CHECK_FALSE(world_from({}).has_value());
  CHECK_FALSE(world_from({{"WORLD_SIZE", "1"}, {"RANK", "0"}}).has_value());
  const auto w = world_from({{"WORLD_SIZE", "4"}, {"RANK", "3"}, {"LOCAL_RANK", "1"},
                             {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29511"}});
  REQUIRE(w.has_value());
  CHECK(w->rank == 3);
  CHECK(w->size == 4);
  CHECK(w->local_rank == 1);
  CHECK(w->local_size == 2);
  CHECK(w->master_addr == "node7");
  CHECK(w->master_port == 29511);
  CHECK_FALSE(w->is_root());
  // srun: its task variables, once MASTER_ADDR says where rank 0 is.
  CHECK_FALSE(world_from({{"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "1"}}).has_value());
  const auto s = world_from({{"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "1"}, {"SLURM_LOCALID", "0"},
                             {"MASTER_ADDR", "10.0.0.1"}});
  REQUIRE(s.has_value());
  CHECK(s->rank == 1);
  CHECK(s->size == 2);
  CHECK(s->local_rank == 0);
  CHECK(s->master_port == 29500);
  CHECK_THROWS_WITH(world_from({{"WORLD_SIZE", "2"}}), Contains("RANK is not set"));
  CHECK_THROWS_WITH(world_from({{"WORLD_SIZE", "2"}, {"RANK", "2"}}), Contains("RANK=2"));
  CHECK_THROWS_WITH(world_from({{"WORLD_SIZE", "two"}, {"RANK", "0"}}), Contains("WORLD_SIZE=two"));
  CHECK_THROWS_WITH(world_from({{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_PORT", "70000"}}),
                    Contains("MASTER_PORT=70000"));
  const auto env = rank_environment(1, 2, "127.0.0.1", 4000);
  const auto back = world_from(env);
  REQUIRE(back.has_value());
  CHECK(back->rank == 1);
  CHECK(back->size == 2);
  CHECK(back->master_port == 4000);
}

TEST_CASE("the shards of a batch are the batch, in order, split as evenly as can be", "[data_parallel]") {
  // 7 examples over 3 ranks: 7*r/3 -> 0, 2, 4, 7.
  CHECK(Shard{0, 3}.range(7) == std::make_pair<int64_t, int64_t>(0, 2));
  CHECK(Shard{1, 3}.range(7) == std::make_pair<int64_t, int64_t>(2, 4));
  CHECK(Shard{2, 3}.range(7) == std::make_pair<int64_t, int64_t>(4, 7));
  // A batch shorter than the ranks leaves a rank empty.
  CHECK(Shard{0, 2}.range(1) == std::make_pair<int64_t, int64_t>(0, 0));
  CHECK(Shard{1, 2}.range(1) == std::make_pair<int64_t, int64_t>(0, 1));
  CHECK(Shard{}.range(5) == std::make_pair<int64_t, int64_t>(0, 5));
}

TEST_CASE("gradient buckets sum weighted gradients and follow shape changes", "[data_parallel][c10d]") {
  REQUIRE(collectives_available());
  World world;
  world.master_port = free_local_port();
  Collective one(world, std::chrono::seconds(20));
  // 40-byte buckets: the 6-float and 5-float gradients fall into buckets of their own.
  GradientBuckets buckets(40);
  auto a = at::arange(6, at::kFloat).view({3, 2}).requires_grad_(), b = at::ones({5}).requires_grad_(),
       unused = at::zeros({4}).requires_grad_(), wide = at::ones({2}, at::kDouble).requires_grad_();
  a.mutable_grad() = at::tensor({1, 2, 3, 4, 5, 6}, at::kFloat).view({3, 2});
  b.mutable_grad() = at::full({5}, -2.0);
  wide.mutable_grad() = at::tensor({0.25, 8.0}, at::kDouble);
  buckets.reduce({a, b, unused, wide}, 0.5, one);
  CHECK(at::equal(a.grad(), at::tensor({0.5, 1.0, 1.5, 2.0, 2.5, 3.0}, at::kFloat).view({3, 2})));
  CHECK(at::equal(b.grad(), at::full({5}, -1.0)));
  CHECK_FALSE(unused.grad().defined());  // no rank had one: the optimiser skips it
  CHECK(at::equal(wide.grad(), at::tensor({0.125, 4.0}, at::kDouble)));
  CHECK(buckets.rebuilds() == 1);
  // 6 + 5 + 4 floats with their 3 flags, 2 doubles with theirs.
  CHECK(buckets.elements() == 6 + 5 + 4 + 3 + 2 + 1);
  // Truncation cut `a` to 2 x 2: the buckets are rebuilt for the new shapes.
  auto cut = at::zeros({2, 2}).requires_grad_();
  cut.mutable_grad() = at::full({2, 2}, 4.0);
  buckets.reduce({cut, b}, 0.25, one);
  CHECK(buckets.rebuilds() == 2);
  CHECK(at::equal(cut.grad(), at::full({2, 2}, 1.0)));
  CHECK(buckets.elements() == 4 + 5 + 2);
  buckets.reduce({cut, b}, 1.0, one);
  CHECK(buckets.rebuilds() == 2);
}

namespace {

// An MNLI-format folder of 48 training and 16 evaluation pairs made of a few words, labels in turn.
void write_pairs(const std::string& dir, int train, int eval) {
  const std::vector<std::string> words = {"red", "cat", "runs", "blue", "dog", "sleeps", "a",
                                          "green", "bird", "sings", "the", "old", "man", "walks"};
  const std::vector<std::string> labels = {"entailment", "neutral", "contradiction"};
  auto write = [&](const std::string& file, int n, int offset) {
    std::ofstream out(dir + "/" + file);
    out << "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"
           "sentence1_parse\tsentence2_parse\tsentence1\tsentence2\tlabel1\tgold_label\n";
    for (int i = 0; i < n; ++i) {
      const int k = i + offset;
      std::string s1, s2;
      for (int w = 0; w < 4 + k % 3; ++w) s1 += (w ? " " : "") + words[(k * 7 + w * 3) % words.size()];
      for (int w = 0; w < 3 + k % 2; ++w) s2 += (w ? " " : "") + words[(k * 5 + w * 2) % words.size()];
      const auto& label = labels[static_cast<size_t>(k) % 3];
      out << k << "\t" << k << "\t" << k << "x\tfiction\t-\t-\t-\t-\t" << s1 << "\t" << s2 << "\t"
          << label << "\t" << label << "\n";
    }
  };
  write("train.tsv", train, 0);
  write("dev_matched.tsv", eval, 1000);
}

nlohmann::json experiment(const std::string& data_dir, int epochs, int64_t checkpoint_every) {
  return {{"name", "dp"},
          {"model",
           {{"vocab", 30522}, {"d_model", 8}, {"heads", 2}, {"layers", 1}, {"ffn", 16},
            {"max_positions", 16}, {"classes", 3}, {"dropout", 0.0}, {"rank_threshold", 0.97},
            {"tensorized", {{"attention", {{"in_modes", {4, 2}}, {"out_modes", {2, 4}}, {"ranks", 4}}},
                            {"ffn_in", {{"in_modes", {4, 2}}, {"out_modes", {4, 4}}, {"ranks", 4}}}}}}},
          {"training",
           {{"epochs", epochs}, {"batch_size", 8}, {"eval_batch_size", 8}, {"seed", 5},
            {"checkpoint_every_steps", checkpoint_every},
            {"optimizer", {{"lr_cores", 0.01}, {"lr_ranks", 0.05}, {"lr_other", 0.01}}},
            {"early_stage", {{"gamma", 0.5}}},
            {"late_stage", {{"start_epoch", 2}, {"loss_target", 0.5}, {"size_ratio", 0.5}}}}},
          {"data", {{"dir", data_dir}, {"train", "train.tsv"}, {"eval", "dev_matched.tsv"}, {"max_length", 16}}}};
}

// 400 training pairs for 200 epochs, a checkpoint every 5 steps: a run that is still training
// when a test stops it. Returns the experiment file.
std::string long_run(const testing::TempDir& dir) {
  write_pairs(dir.file(""), 400, 16);
  const auto config = dir.file("dp.json");
  std::ofstream(config) << experiment(dir.file(""), 200, 5).dump();
  return config;
}

nlohmann::json run_json(const std::string& args) {
  const auto r = testing::run_cli(args + " 2>/dev/null");
  INFO(args << "\n" << r.output);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.output.substr(r.output.find('{')));
}

// The checkpoint's parameters by name, loaded into the experiment's model (its ranks as saved).
std::map<std::string, at::Tensor> parameters_of(const std::string& checkpoint, const nlohmann::json& json) {
  const auto e = parse_experiment(json);
  auto task = e.model.build(e.training.task, DataInfo{});
  Checkpoint(checkpoint).load_model(task->model());
  std::map<std::string, at::Tensor> out;
  for (const auto& item : task->model().named_parameters()) out[item.key()] = item.value().detach().clone();
  return out;
}

}  // namespace

TEST_CASE("2 ranks with half batches train as 1 rank with whole ones, through truncation and a resume",
          "[data_parallel][c10d]") {
  REQUIRE(collectives_available());
  testing::TempDir dir;
  write_pairs(dir.file(""), 48, 16);
  const auto config = dir.file("dp.json");
  std::ofstream(config) << experiment(dir.file(""), 4, 0).dump();
  const std::string base = "train --no-db --quiet --json --threads 1 --config " + config;
  const auto one = run_json(base + " --checkpoint " + dir.file("one.pt"));
  // 6 steps an epoch: stop inside the second epoch (after the first truncation), then resume.
  const auto first = run_json(base + " --nproc 2 --stop-at 9 --checkpoint " + dir.file("two.pt"));
  CHECK(first.at("status") == "step_limit");
  const auto rest = run_json(base + " --nproc 2 --resume --checkpoint " + dir.file("two.pt"));
  CHECK(rest.at("status") == "completed");
  CHECK(rest.at("steps") == 24);

  // Per-epoch metrics: the whole epochs of both invocations line up with the single run's.
  std::vector<nlohmann::json> two;
  for (const auto& m : first.at("epochs"))
    if (!m.at("partial").get<bool>()) two.push_back(m);
  for (const auto& m : rest.at("epochs")) two.push_back(m);
  const auto& single = one.at("epochs");
  REQUIRE(two.size() == single.size());
  REQUIRE(single.size() == 4);
  for (size_t i = 0; i < single.size(); ++i) {
    INFO("epoch " << i + 1);
    CHECK(two[i].at("stage") == single[i].at("stage"));
    CHECK(two[i].at("size") == single[i].at("size"));  // the same ranks cut at the same time
    CHECK(two[i].at("ranks") == 2);
    CHECK(two[i].at("all_reduce_mb").get<double>() > 0);
    CHECK(two[i].at("train_loss").get<double>() ==
          Approx(single[i].at("train_loss").get<double>()).epsilon(1e-4));
    CHECK(two[i].at("eval_loss").get<double>() ==
          Approx(single[i].at("eval_loss").get<double>()).epsilon(1e-4));
    CHECK(two[i].at("accuracy") == single[i].at("accuracy"));
  }
  const auto json = experiment(dir.file(""), 4, 0);
  const auto a = parameters_of(dir.file("one.pt"), json), b = parameters_of(dir.file("two.pt"), json);
  REQUIRE(a.size() == b.size());
  bool truncated = false;
  for (const auto& [name, value] : a) {
    INFO(name);
    REQUIRE(b.count(name));
    REQUIRE(value.sizes() == b.at(name).sizes());
    if (name.find(".rank") != std::string::npos && value.numel() < 4) truncated = true;
    // The key bias shifts every score of a query alike, which softmax ignores: its gradient is
    // rounding noise, and AdamW turns noise of any size into full steps.
    if (name.find("key.bias") != std::string::npos) continue;
    // float32 sums in another order: agreement to a few units in the fifth digit.
    CHECK(at::allclose(value, b.at(name), 1e-4, 1e-5));
  }
  CHECK(truncated);
}

TEST_CASE("a killed rank ends the other with an error naming it, and a checkpoint to resume from",
          "[data_parallel][c10d]") {
  REQUIRE(collectives_available());
  testing::TempDir dir;
  const auto config = long_run(dir);
  const auto checkpoint = dir.file("run.pt"), db = dir.file("r.db");
  const int port = free_local_port();
  auto start = [&](int rank) {
    std::vector<std::string> argv = {"env"};
    for (const auto& [name, value] : rank_environment(rank, 2, "127.0.0.1", port))
      argv.push_back(name + "=" + value);
    for (const std::string a : {testing::cli_path(), std::string("train"), std::string("--db"), db,
                                std::string("--quiet"), std::string("--threads"), std::string("1"),
                                std::string("--timeout"), std::string("10"), std::string("--config"),
                                config, std::string("--checkpoint"), checkpoint})
      argv.push_back(a);
    return start_process(argv, dir.file("rank" + std::to_string(rank) + ".log"), "rank");
  };
  const pid_t rank0 = start(0), rank1 = start(1);
  using Clock = std::chrono::steady_clock;
  // Training is under way once rank 0 has written its first checkpoint (every 5 steps).
  const auto t0 = Clock::now();
  while (!std::filesystem::exists(checkpoint) && Clock::now() - t0 < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const bool started = std::filesystem::exists(checkpoint);
  ::kill(rank1, SIGKILL);
  std::optional<int> status;
  const auto t1 = Clock::now();
  while (!(status = poll_process(rank0)) && Clock::now() - t1 < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (!status) ::kill(rank0, SIGKILL), poll_process(rank0);
  wait_process(rank1);
  std::ifstream in(dir.file("rank0.log"));
  const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  INFO(log);
  REQUIRE(started);
  REQUIRE(status.has_value());  // within the bound, not a hang
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) != 0);
  CHECK_THAT(log, Contains("lost rank 1"));
  CHECK_THAT(log, Contains("resume"));
  CHECK_THAT(log, Contains("checkpoint " + checkpoint + " holds step"));
  // Rank 0 alone recorded the run: one trial, failed with that message, which a resume continues.
  SQLite::Database sql(db, SQLite::OPEN_READONLY);
  SQLite::Statement q(sql, "SELECT state, error FROM trials");
  REQUIRE(q.executeStep());
  CHECK(q.getColumn(0).getString() == "failed");
  CHECK_THAT(q.getColumn(1).getString(), Contains("lost rank 1"));
  CHECK_FALSE(q.executeStep());
}

TEST_CASE("a sweep trial that asks for 2 ranks launches them and records like any trial",
          "[data_parallel][c10d]") {
  REQUIRE(collectives_available());
  testing::TempDir dir;
  write_pairs(dir.file(""), 48, 16);
  const auto spec = dir.file("spec.json");
  std::ofstream(spec) << nlohmann::json{{"name", "ranks"},
                                        {"base", experiment(dir.file(""), 3, 0)},
                                        {"objectives", "size:min,eval_loss:min"},
                                        {"axes", {{"set", {{"training.nproc", {1, 2}}}}}}}
                             .dump();
  const auto db = dir.file("r.db");
  const auto r = testing::run_cli("sweep " + spec + " --db " + db + " --quiet --no-front --threads 1");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output, Contains("2 data-parallel ranks"));
  SQLite::Database sql(db, SQLite::OPEN_READONLY);
  auto eval_loss = [&](int nproc) {
    SQLite::Statement q(sql, "SELECT t.state, o.value FROM objectives o JOIN trials t ON t.id = o.trial_id "
                             "WHERE coalesce(json_extract(t.config, '$.experiment.training.nproc'), 1) = ? "
                             "AND o.name = 'eval_loss'");
    q.bind(1, nproc);
    REQUIRE(q.executeStep());
    CHECK(q.getColumn(0).getString() == "complete");
    return q.getColumn(1).getDouble();
  };
  CHECK(eval_loss(2) == Approx(eval_loss(1)).epsilon(1e-4));
  SQLite::Statement epochs(sql, "SELECT count(*) FROM epochs");
  REQUIRE(epochs.executeStep());
  CHECK(epochs.getColumn(0).getInt() == 6);
  // The 2-rank trial's epochs carry the all-reduce's figures; the 1-rank trial's none.
  SQLite::Statement ranks(sql, "SELECT count(*), min(value) FROM epoch_metrics WHERE name = 'ranks'");
  REQUIRE(ranks.executeStep());
  CHECK(ranks.getColumn(0).getInt() == 3);
  CHECK(ranks.getColumn(1).getDouble() == 2);
}

TEST_CASE("a ring all-reduce's bytes project to link times by hand", "[data_parallel]") {
  // 2 ranks: each sends and receives the whole buffer once: 100 MB at 10 Gbit/s is 80 ms.
  CHECK(ring_all_reduce_seconds(100'000'000, 2, 10) == Approx(0.08));
  // 4 ranks: 1.5 times the buffer; 1 rank: nothing to send.
  CHECK(ring_all_reduce_seconds(100'000'000, 4, 10) == Approx(0.12));
  CHECK(ring_all_reduce_seconds(100'000'000, 1, 10) == 0);
  CHECK(projected_step_seconds(0.5, 125'000'000, 2, 1) == Approx(1.5));
}

TEST_CASE("a benchmark's all-reduce time is the transfer; the wait for the slower rank is counted apart",
          "[data_parallel][c10d]") {
  REQUIRE(collectives_available());
  // Two ranks as threads of this process; rank 1 reaches the all-reduce 300 ms after rank 0.
  const int port = free_local_port();
  double transfer = -1, waited = -1;
  const auto rank = [&](int r) {
    World world;
    world.rank = r;
    world.size = 2;
    world.master_port = port;
    DataParallel parallel(world, std::chrono::seconds(20));
    parallel.time_waits(true);
    auto p = at::zeros({4}).requires_grad_();
    p.mutable_grad() = at::ones({4});
    if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    parallel.reduce_gradients({p}, 1.0);
    if (r == 0) transfer = parallel.gradient_seconds(), waited = parallel.wait_seconds();
  };
  std::thread other(rank, 1);
  rank(0);
  other.join();
  // A 4-float all-reduce over 127.0.0.1 takes well under 100 ms; the wait is rank 1's 300 ms.
  CHECK(waited >= 0.25);
  CHECK(transfer >= 0);
  CHECK(transfer < 0.1);
}

TEST_CASE("comera bench data-parallel measures both layouts of both builds", "[data_parallel][c10d]") {
  REQUIRE(collectives_available());
  testing::TempDir dir;
  const auto config = dir.file("dp.json");
  std::ofstream(config) << experiment(dir.file(""), 3, 0).dump();
  const auto j = run_json("bench data-parallel --json --seq 8 --batch 4 --warmup 0 --repeats 1 --config " + config);
  REQUIRE(j.at("rows").size() == 4);
  for (const auto& row : j.at("rows")) {
    INFO(row.dump());
    CHECK(row.at("median_ms").get<double>() > 0);
    CHECK(row.contains("all_reduce_bytes") == (row.at("ranks") == 2));
    CHECK(row.contains("all_reduce_wait_ms") == (row.at("ranks") == 2));
  }
  // Each all-reduce carries every gradient as float32 (more than the model's size, which leaves
  // out rank vectors and the like), and one flag per parameter tensor.
  std::map<std::string, double> bytes;
  for (const auto& row : j.at("rows"))
    if (row.at("ranks") == 2) {
      const auto b = row.at("all_reduce_bytes").get<int64_t>(), p = row.at("params").get<int64_t>();
      CHECK(b > 4 * p);
      bytes[row.at("build")] = static_cast<double>(b);
    }
  CHECK(j.at("byte_ratio").get<double>() == Approx(bytes.at("dense") / bytes.at("tensorized")));
  CHECK(j.at("projections").size() == 3);
  // bench step --nproc 2 says in text what its help promises: the all-reduce and the wait.
  const auto text = testing::run_cli("bench step --nproc 2 --threads 1 --seq 8 --batch 2 --warmup 0 --repeats 1 --config " +
                                     config + " 2>/dev/null");
  INFO(text.output);
  CHECK(text.status == 0);
  CHECK_THAT(text.output, Contains("2 ranks: gradient all-reduce") && Contains("waiting for the slowest rank"));
}

TEST_CASE("data-parallel training refuses sparse gradients before any work", "[data_parallel][c10d]") {
  REQUIRE(collectives_available());
  World world;
  world.master_port = free_local_port();
  DataParallel one(world, std::chrono::seconds(20));
  TaskSpec ctr;
  ctr.kind = "ctr";
  const auto spec = parse_model_spec(
      {{"kind", "dlrm"}, {"dense_features", 3}, {"embedding_dim", 4}, {"bottom_mlp", {8, 4}},
       {"top_mlp", {6, 1}}, {"table_sizes", {5, 30, 7}}, {"sparse_gradients", true}},
      ctr);
  TrainerOptions options;
  options.parallel = &one;
  TrainConfig training;
  training.task = ctr;
  CHECK_THROWS_WITH(Trainer(spec, training, TaskData{}, options),
                    Contains("model.sparse_gradients") && Contains("set model.sparse_gradients to false"));
}

TEST_CASE("a rank whose MASTER_PORT answers but never speaks gives up within its timeout, naming it",
          "[data_parallel][c10d]") {
  REQUIRE(collectives_available());
  // Another program's socket: it takes connections (the kernel completes them from the listen
  // queue) and never says a word.
  const int foreign = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(foreign >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(foreign, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(foreign, 16) == 0);
  socklen_t length = sizeof address;
  REQUIRE(::getsockname(foreign, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  World world;
  world.rank = 1;
  world.size = 2;
  world.master_addr = "127.0.0.1";
  world.master_port = ntohs(address.sin_port);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(Collective(world, std::chrono::seconds(1)),
                    Catch::Matchers::Contains("rank 1 of 2") &&
                        Catch::Matchers::Contains("127.0.0.1:" + std::to_string(world.master_port)) &&
                        Catch::Matchers::Contains("did not complete in 1 s (--timeout)"));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
  ::close(foreign);
}

namespace {

// The launcher's children by rank (RANK in their environment).
// The live (not zombie) children of `parent`.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(text.substr(close + 2));
    std::string state;
    pid_t ppid = 0;
    fields >> state >> ppid;
    if (ppid == parent && state != "Z") out.push_back(std::stoi(name));
  }
  return out;
}

// A launcher's ranks by their RANK variable.
std::map<int, pid_t> ranks_of(pid_t launcher) {
  std::map<int, pid_t> out;
  for (const pid_t child : children_of(launcher)) {
    std::ifstream environ("/proc/" + std::to_string(child) + "/environ");
    std::string env((std::istreambuf_iterator<char>(environ)), std::istreambuf_iterator<char>());
    for (size_t at = 0; at < env.size(); at = env.find('\0', at) + 1) {
      if (env.compare(at, 5, "RANK=") == 0) out[std::stoi(env.substr(at + 5))] = child;
      if (env.find('\0', at) == std::string::npos) break;
    }
  }
  return out;
}

// Running, not ended (a zombie nobody reaps counts as ended).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

}  // namespace

TEST_CASE("a killed rank 0 leaves its trial failed, not running; a killed launcher leaves no rank",
          "[data_parallel][c10d]") {
  REQUIRE(collectives_available());
  testing::TempDir dir;
  const auto config = long_run(dir);
  using Clock = std::chrono::steady_clock;
  auto launch = [&](const std::string& name) {
    const auto checkpoint = dir.file(name + ".pt"), db = dir.file(name + ".db");
    const pid_t launcher = testing::spawn_cli({"train", "--nproc", "2", "--db", db, "--quiet", "--timeout", "5",
                                               "--config", config, "--checkpoint", checkpoint},
                                              dir.file(name + ".log"));
    // Under way once rank 0 has written its first checkpoint (every 5 steps).
    const auto t0 = Clock::now();
    while (!std::filesystem::exists(checkpoint) && Clock::now() - t0 < std::chrono::seconds(60))
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(std::filesystem::exists(checkpoint));
    const auto ranks = ranks_of(launcher);
    REQUIRE(ranks.size() == 2);
    return std::make_tuple(launcher, ranks, db);
  };

  SECTION("rank 0 killed") {
    const auto started = launch("root");
    const pid_t launcher = std::get<0>(started);
    const auto& db = std::get<2>(started);
    ::kill(std::get<1>(started).at(0), SIGKILL);
    const int status = testing::wait_cli(launcher);
    CHECK(status != 0);
    SQLite::Database sql(db, SQLite::OPEN_READONLY);
    SQLite::Statement q(sql, "SELECT state, error FROM trials");
    REQUIRE(q.executeStep());
    CHECK(q.getColumn(0).getString() == "failed");
    CHECK_THAT(q.getColumn(1).getString(), Contains("rank 0 ended (killed by signal 9") && Contains("--resume"));
  }
  SECTION("the launcher killed") {
    const auto started = launch("launcher");
    const pid_t launcher = std::get<0>(started);
    const auto ranks = std::get<1>(started);
    ::kill(launcher, SIGKILL);
    testing::wait_cli(launcher);
    // The ranks stop on their own (SIGTERM on the launcher's death), resumably.
    const auto t0 = Clock::now();
    auto any_alive = [&] {
      for (const auto& item : ranks)
        if (running(item.second)) return true;
      return false;
    };
    while (any_alive() && Clock::now() - t0 < std::chrono::seconds(60))
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK_FALSE(any_alive());
  }
}

TEST_CASE("a sweep worker killed during a 2-rank trial takes its launcher and ranks along; the trial resumes",
          "[data_parallel][c10d]") {
  REQUIRE(collectives_available());
  testing::TempDir dir;
  write_pairs(dir.file(""), 400, 16);
  auto base = experiment(dir.file(""), 24, 5);  // some 20 s of training: orphans would outlive the checks
  base["training"]["nproc"] = 2;
  const auto spec = dir.file("spec.json");
  std::ofstream(spec) << nlohmann::json{{"name", "killed"}, {"base", base}, {"objectives", "size:min,eval_loss:min"},
                                        {"axes", {{"set", {{"training.seed", {5}}}}}}}
                             .dump();
  const auto db = dir.file("r.db");
  const std::vector<std::string> sweep = {"sweep", spec, "--db", db, "--quiet", "--no-front", "--threads", "1"};
  const pid_t worker = testing::spawn_cli(sweep, dir.file("sweep.log"));
  using Clock = std::chrono::steady_clock;
  auto checkpoint_written = [&] {
    const auto folder = dir.file("checkpoints/killed");
    if (!std::filesystem::exists(folder)) return false;
    for (const auto& f : std::filesystem::directory_iterator(folder))
      if (f.path().extension() == ".pt") return true;
    return false;
  };
  const auto t0 = Clock::now();
  while (!checkpoint_written() && Clock::now() - t0 < std::chrono::seconds(90))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(checkpoint_written());
  const auto launchers = children_of(worker);
  REQUIRE(launchers.size() == 1);
  const auto ranks = ranks_of(launchers[0]);
  REQUIRE(ranks.size() == 2);
  ::kill(worker, SIGKILL);
  testing::wait_cli(worker);
  auto any_alive = [&] {
    if (running(launchers[0])) return true;
    for (const auto& item : ranks)
      if (running(item.second)) return true;
    return false;
  };
  const auto t1 = Clock::now();
  while (any_alive() && Clock::now() - t1 < std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(any_alive());
  auto state = [&] {
    SQLite::Database sql(db, SQLite::OPEN_READONLY);
    SQLite::Statement q(sql, "SELECT state, id, worker, (SELECT count(*) FROM epochs) FROM trials");
    REQUIRE(q.executeStep());
    return std::make_tuple(q.getColumn(0).getString(), q.getColumn(1).getInt64(), q.getColumn(2).getString(),
                           q.getColumn(3).getInt());
  };
  CHECK(std::get<0>(state()) == "killed");
  // Run again, the sweep resumes the trial and completes it.
  const auto again = testing::run_cli("sweep " + spec + " --db " + db + " --quiet --no-front --threads 1");
  INFO(again.output);
  CHECK(again.status == 0);
  const auto [ended, id, holder, epochs] = state();
  CHECK(ended == "complete");
  CHECK(epochs == 24);

  // Ranks that ended their run before its outcome was recorded: the launcher asked again
  // records it from the epochs, rather than leaving the trial to fail.
  {
    SQLite::Database sql(db, SQLite::OPEN_READWRITE);
    sql.exec("UPDATE trials SET state = 'running'");
  }
  std::string checkpoint;
  for (const auto& f : std::filesystem::directory_iterator(dir.file("checkpoints/killed")))
    if (f.path().filename().string().rfind("trial-", 0) == 0 && f.path().extension() == ".pt") checkpoint = f.path();
  const auto relaunched = testing::run_cli("train --config " + checkpoint + ".experiment.json --db " + db +
                                           " --checkpoint " + checkpoint + " --resume --quiet --trial " +
                                           std::to_string(id) + " --worker '" + holder + "' --threads 1");
  INFO(relaunched.output);
  CHECK(relaunched.status == 0);
  CHECK_THAT(relaunched.output, Contains("has already ended: recording its outcome"));
  CHECK(std::get<0>(state()) == "complete");
}
