// Sweep specs: axis parsing, grid and seeded random expansion, shapes and rank caps, baselines,
// published figures, and shard splitting; against hand-written expectations.
#include "core/formats/factorize.h"
#include "core/training/experiment.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "core/util/source_dir.h"
#include "core/models/model_kind.h"
#include "search/sweep/shape_choices.h"
#include "search/sweep/shard.h"
#include "search/sweep/sweep_spec.h"
#include "search/sweep/trial_expansion.h"
#include "core/models/model_config.h"
#include "tests/support/catch.h"
#include "tests/support/reads_back.h"
#include "tests/support/temp_dir.h"

#include <filesystem>
#include <fstream>
#include <set>

using namespace comera;
using namespace comera::sweep;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

// A tiny experiment with every layer kind tensorized and a late stage.
json tiny_experiment() {
  return {{"name", "tiny"},
          {"model",
           {{"vocab", 50}, {"d_model", 8}, {"heads", 2}, {"layers", 1}, {"ffn", 16},
            {"max_positions", 16}, {"classes", 3}, {"dropout", 0.0},
            {"tensorized",
             {{"embedding", {{"vocab_modes", {4, 4, 4}}, {"emb_modes", {2, 2, 2}}, {"ranks", 3}}},
              {"attention", {{"in_modes", {4, 2}}, {"out_modes", {2, 4}}, {"ranks", {1, 3, 4, 3, 1}}}},
              {"ffn_in", {{"in_modes", {4, 2}}, {"out_modes", {4, 4}}, {"ranks", 3}}},
              {"ffn_out", {{"in_modes", {4, 4}}, {"out_modes", {2, 4}}, {"ranks", 3}}},
              {"classifier", {{"in_modes", {2, 4}}, {"out_modes", {4, 2}}, {"ranks", 2}}}}}}},
          {"training",
           {{"epochs", 2}, {"batch_size", 4}, {"seed", 7},
            {"late_stage", {{"start_epoch", 1}, {"loss_target", 0.8}, {"size_ratio", 0.2}}}}}};
}

json spec_with(const json& axes) {
  return {{"name", "t"}, {"base", tiny_experiment()}, {"axes", axes}};
}

std::string point_of(const json& trial) { return trial["point"].dump(); }

}  // namespace

TEST_CASE("grid expansion: baselines first, first axis outermost, targets innermost", "[sweep]") {
  json j = spec_with({{"seeds", {0, 1}},
                      {"gamma", {0.01, 0.1}},
                      {"targets", {{"loss", {1.0, 1.1}}, {"size_ratio", {0.5, 0.2}}}}});
  j["baselines"] = {"dense", "early"};
  const auto trials = expand_trials(parse_sweep_spec(j));
  // 2 dense (one per seed), 4 early (seed x gamma), 16 late (seed x gamma x 2 x 2).
  REQUIRE(trials.size() == 22);
  for (int i = 0; i < 2; ++i) {
    CHECK(trials[i]["kind"] == "dense");
    CHECK(point_of(trials[i]) == json{{"seed", i}}.dump());
    CHECK_FALSE(trials[i]["experiment"]["model"].contains("tensorized"));
    CHECK_FALSE(trials[i]["experiment"]["training"].contains("late_stage"));
    CHECK(trials[i]["seed"] == i);
  }
  CHECK(trials[2]["kind"] == "early");
  CHECK(point_of(trials[3]) == json{{"seed", 0}, {"gamma", 0.1}}.dump());
  CHECK_FALSE(trials[3]["experiment"]["training"].contains("late_stage"));
  CHECK(trials[3]["experiment"]["training"]["early_stage"]["gamma"] == 0.1);
  CHECK(trials[3]["experiment"]["training"]["epochs"] == 1);  // until the late stage would start
  CHECK(trials[0]["experiment"]["training"]["epochs"] == 2);
  CHECK(trials[6]["experiment"]["training"]["epochs"] == 2);
  CHECK(point_of(trials[5]) == json{{"seed", 1}, {"gamma", 0.1}}.dump());

  const std::vector<std::pair<double, double>> order = {{1.0, 0.5}, {1.0, 0.2}, {1.1, 0.5}, {1.1, 0.2}};
  for (size_t i = 0; i < 4; ++i) {
    const auto& t = trials[6 + i];
    CHECK(t["kind"] == "late");
    CHECK(t["point"]["loss_target"] == order[i].first);
    CHECK(t["point"]["size_ratio"] == order[i].second);
    CHECK(t["experiment"]["training"]["late_stage"]["loss_target"] == order[i].first);
    CHECK(t["experiment"]["training"]["late_stage"]["size_ratio"] == order[i].second);
    CHECK(t["experiment"]["training"]["late_stage"]["start_epoch"] == 1);  // from the base
    CHECK(t["experiment"]["training"]["seed"] == 0);
  }
  CHECK(point_of(trials[21]) ==
        json{{"seed", 1}, {"gamma", 0.1}, {"loss_target", 1.1}, {"size_ratio", 0.2}}.dump());
  // Deterministic: the same spec expands to the same list.
  CHECK(expand_trials(parse_sweep_spec(j)) == trials);
}

TEST_CASE("targets as listed pairs, S0 absolute or as a ratio", "[sweep]") {
  const auto trials = expand_trials(parse_sweep_spec(
      spec_with({{"targets", {{{"loss", 0.9}, {"size", 500}}, {{"loss", 1.0}, {"size_ratio", 0.3}}}}})));
  REQUIRE(trials.size() == 2);
  const auto& late0 = trials[0]["experiment"]["training"]["late_stage"];
  CHECK(late0["size_target"] == 500);
  CHECK_FALSE(late0.contains("size_ratio"));  // the base's ratio gives way to the absolute S0
  CHECK(trials[0]["point"] == json{{"seed", 7}, {"loss_target", 0.9}, {"size_target", 500}});
  CHECK(trials[1]["experiment"]["training"]["late_stage"]["size_ratio"] == 0.3);
  // The repeats default to one run at the base's seed.
  CHECK(trials[1]["seed"] == 7);

  const auto grid = expand_trials(parse_sweep_spec(
      spec_with({{"repeats", 2}, {"targets", {{"loss", {1.0}}, {"size", {100, 200}}}}})));
  REQUIRE(grid.size() == 4);
  CHECK(grid[1]["experiment"]["training"]["late_stage"]["size_target"] == 200);
  CHECK_FALSE(grid[1]["experiment"]["training"]["late_stage"].contains("size_ratio"));
  CHECK(grid[2]["seed"] == 8);
}

TEST_CASE("shapes: factorised into d modes or given, then rank caps", "[sweep]") {
  CHECK(covering_modes(30522, 4) == std::vector<int64_t>{14, 14, 13, 12});  // 30,576 rows
  CHECK(covering_modes(30522, 3) == std::vector<int64_t>{32, 32, 30});      // 30,720 rows
  CHECK(covering_modes(50, 2) == std::vector<int64_t>{8, 7});
  CHECK(covering_modes(64, 3) == std::vector<int64_t>{4, 4, 4});

  json explicit_shape = {{"name", "attn-only"},
                         {"tensorized", {{"attention", {{"in_modes", {8}}, {"out_modes", {8}}, {"ranks", 5}}}}}};
  const auto trials = expand_trials(parse_sweep_spec(spec_with(
      {{"shapes", {{{"factorise", 2}}, {{"factorise", 3}}, explicit_shape}}, {"rank_cap", {2, 8}}})));
  REQUIRE(trials.size() == 6);
  const auto& d2 = trials[0]["experiment"]["model"]["tensorized"];
  CHECK(trials[0]["point"] == json{{"seed", 7}, {"shape", "d=2"}, {"rank_cap", 2}});
  CHECK(d2["attention"] == json{{"in_modes", {4, 2}}, {"out_modes", {2, 4}}, {"ranks", 2}});
  CHECK(d2["ffn_in"] == json{{"in_modes", {4, 2}}, {"out_modes", {4, 4}}, {"ranks", 2}});
  CHECK(d2["ffn_out"] == json{{"in_modes", {4, 4}}, {"out_modes", {2, 4}}, {"ranks", 2}});
  CHECK(d2["embedding"] == json{{"vocab_modes", {8, 7}}, {"emb_modes", {4, 2}}, {"ranks", 2}});
  // Rank cap 8 leaves the base's interior ranks (largest of the attention list: 4).
  const auto& d2_wide = trials[1]["experiment"]["model"]["tensorized"];
  CHECK(d2_wide["attention"]["ranks"] == 4);
  CHECK(d2_wide["classifier"]["ranks"] == 2);
  const auto& d3 = trials[2]["experiment"]["model"]["tensorized"];
  CHECK(d3["attention"] == json{{"in_modes", {2, 2, 2}}, {"out_modes", {2, 2, 2}}, {"ranks", 2}});
  const auto& given = trials[4]["experiment"]["model"]["tensorized"];
  CHECK(given == json{{"attention", {{"in_modes", {8}}, {"out_modes", {8}}, {"ranks", 2}}}});

  const json model = tiny_experiment()["model"];
  json ttm_model = model;
  ttm_model["tensorized"]["attention"]["format"] = "ttm";
  ttm_model["tensorized"]["attention"]["ranks"] = json{1, 3, 1};
  ttm_model["tensorized"]["attention"]["in_modes"] = json{2, 4};
  ttm_model["tensorized"]["attention"]["out_modes"] = json{4, 2};
  const json refactored = model_kind_of(ttm_model).factorise(ttm_model, 3);
  CHECK(refactored["attention"] ==
        json{{"format", "ttm"}, {"in_modes", {2, 2, 2}}, {"out_modes", {2, 2, 2}}, {"ranks", 3}});
  CHECK_FALSE(refactored["ffn_in"].contains("format"));
  json rebuilt = ttm_model;
  rebuilt["tensorized"] = refactored;
  CHECK(parse_model_config(rebuilt).attention.ranks == std::vector<int64_t>{1, 3, 3, 1});
  const json capped = model_kind_of(model).cap_ranks(model, 2);
  CHECK(capped["tensorized"]["attention"]["ranks"] == json{1, 2, 2, 2, 1});
  CHECK(capped["tensorized"]["embedding"]["ranks"] == 2);
}

TEST_CASE("random sampling: seeded, distinct draws, ranges rounded, seeds multiply", "[sweep]") {
  json j = spec_with({{"seeds", {0, 1}},
                      {"gamma", {{"min", 1e-3}, {"max", 1e-1}, {"log", true}}},
                      {"beta", {0, 1e-4}},
                      {"targets", {{"loss", {{"min", 0.5}, {"max", 1.5}}}, {"size_ratio", {0.8, 0.5, 0.2}}}}});
  j["sampling"] = {{"method", "random"}, {"trials", 5}, {"seed", 3}};
  const auto trials = expand_trials(parse_sweep_spec(j));
  REQUIRE(trials.size() == 10);
  std::set<std::string> draws;
  for (size_t i = 0; i < trials.size(); ++i) {
    auto point = trials[i]["point"];
    CHECK(point["seed"] == (i < 5 ? 0 : 1));
    const double gamma = point["gamma"], loss = point["loss_target"];
    CHECK(gamma >= 1e-3);
    CHECK(gamma <= 1e-1);
    CHECK(loss >= 0.5);
    CHECK(loss <= 1.5);
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", gamma);
    CHECK(std::stod(text) == gamma);  // four significant digits
    point.erase("seed");
    draws.insert(point.dump());
    if (i >= 5) {  // the same draws under both seeds
      auto first = trials[i - 5]["point"];
      first.erase("seed");
      CHECK(first == point);
    }
  }
  CHECK(draws.size() == 5);
  CHECK(expand_trials(parse_sweep_spec(j)) == trials);
  j["sampling"]["seed"] = 4;
  CHECK(expand_trials(parse_sweep_spec(j)) != trials);
}

TEST_CASE("sweep spec errors name the key and the fix", "[sweep]") {
  CHECK_THROWS_WITH(parse_sweep_spec(spec_with({{"gamma", {{"min", 0.1}, {"max", 1}}}})),
                    Contains("axes.gamma: a range needs random or adaptive sampling"));
  json no_late = spec_with({{"targets", {{"loss", {1}}, {"size_ratio", {0.5}}}}});
  no_late["base"]["training"].erase("late_stage");
  CHECK_THROWS_WITH(parse_sweep_spec(no_late), Contains("no training.late_stage"));
  CHECK_THROWS_WITH(parse_sweep_spec(spec_with({{"gama", {0.1}}})), Contains("axes.gama: unknown key"));
  // A required key misspelt: the missing key's error names the near miss.
  json misspelt = spec_with({{"gamma", {0.1}}});
  misspelt["axess"] = misspelt["axes"];
  misspelt.erase("axes");
  CHECK_THROWS_WITH(parse_sweep_spec(misspelt), Contains("axes: missing") && Contains("'axess' here may be it, misspelt"));
  CHECK_THROWS_WITH(parse_sweep_spec(spec_with({{"contraction", {"fastest"}}})),
                    Contains("tuned, merged, core-by-core or reconstruct"));
  CHECK_THROWS_WITH(parse_sweep_spec(spec_with({{"seeds", {1}}, {"repeats", 2}})),
                    Contains("seeds or repeats, not both"));
  CHECK_THROWS_WITH(parse_sweep_spec(spec_with({{"targets", {{"loss", {1}}}}})),
                    Contains("exactly one of them"));
  CHECK_THROWS_WITH(parse_sweep_spec(spec_with({{"size_ratio", {1.5}}})), Contains("unknown key"));
  CHECK_THROWS_WITH(parse_sweep_spec(spec_with({{"targets", {{"loss", {1}}, {"size_ratio", {1.5}}}}})),
                    Contains("entry 1.5 is not a number in [0"));
  // An invalid trial experiment is caught before anything runs, naming its point.
  CHECK_THROWS_WITH(expand_trials(parse_sweep_spec(spec_with({{"set", {{"model.heads", {3}}}}}))),
                    Contains("trial {\"model.heads\":3,\"seed\":7}"));
}

TEST_CASE("objectives are names the trials record, checked when the spec is read", "[sweep]") {
  json j = spec_with({{"gamma", {0.1}}});
  j["objectives"] = "eval_los:min";
  CHECK_THROWS_WITH(parse_sweep_spec(j), Contains("objectives: 'eval_los'") &&
                                             Contains("eval_loss") && Contains("accuracy"));
  j["objectives"] = "accuracy:max,compression:max,tokens_per_s:max";
  CHECK(parse_sweep_spec(j).objectives == "accuracy:max,compression:max,tokens_per_s:max");
  j["objectives"] = "eval_loss:least";
  CHECK_THROWS_WITH(parse_sweep_spec(j), Contains("name:min or name:max"));
  // Step-measuring trials record times and sizes, not losses.
  j["measure"] = "step";
  j["objectives"] = "eval_loss:min";
  CHECK_THROWS_WITH(parse_sweep_spec(j), Contains("'eval_loss'") && Contains("peak_tensor_mb"));
  j["objectives"] = "step_time_ms:min,size_mb:min";
  CHECK_NOTHROW(parse_sweep_spec(j));
}

TEST_CASE("a DLRM sweep can maximise the AUC; a transformer sweep cannot ask for it", "[sweep]") {
  json j = spec_with({{"gamma", {0.1}}});
  j["objectives"] = "auc:max,size:min";
  CHECK_THROWS_WITH(parse_sweep_spec(j), Contains("'auc' is not recorded by transformer model's "
                                                  "classification training trials") &&
                                             Contains("eval_loss"));
  j["base"] = read_json_file(comera::source_dir() + "/experiments/small_dlrm_synthetic.json");
  j["axes"] = {{"gamma", {0.1}}};
  CHECK(parse_sweep_spec(j).objectives == "auc:max,size:min");
  CHECK(recorded_objectives(false, {"auc"}).size() == recorded_objectives(false).size() + 1);
  // Step-measuring trials evaluate nothing, whatever the task.
  j["measure"] = "step";
  CHECK_THROWS_WITH(parse_sweep_spec(j), Contains("'auc' is not recorded by step-measuring"));
}

TEST_CASE("a dense baseline starts from the dense build's pre-training checkpoint", "[sweep]") {
  json j = spec_with({{"set", {{"training.init_from", {"results/checkpoints/pre.pt"}}}}});
  j["baselines"] = {"dense"};
  const auto trials = expand_trials(parse_sweep_spec(j));
  REQUIRE(trials.size() == 2);
  CHECK(trials[0]["kind"] == "dense");
  CHECK(trials[0]["experiment"]["training"]["init_from"] == "results/checkpoints/pre_dense.pt");
  CHECK(trials[1]["experiment"]["training"]["init_from"] == "results/checkpoints/pre.pt");
}

TEST_CASE("generic overrides and published figures from the reference file", "[sweep]") {
  comera::testing::TempDir dir;
  std::ofstream(dir.file("ref.json")) << R"({"certainty": {"reported": "in a table"},
    "paper": {"mb": {"value": 3.2, "source": "a table", "certainty": "reported"},
              "x": {"value": 43, "source": "a table", "certainty": "reported"}}})";
  json j = spec_with({{"set", {{"training.batch_size", {2, 4}}, {"training.size_surrogate", {"mean"}}}}});
  j["baselines"] = {"dense"};
  j["published"] = {{{"label", "paper"}, {"size_mb", "/paper/mb"}, {"compression", "/paper/x"}},
                    {{"label", "given"}, {"eval_loss", 1.0}}};
  const auto spec = parse_sweep_spec(j, "", dir.file("ref.json"));
  CHECK(spec.published[0]["size_mb"] == 3.2);
  CHECK(spec.published[0]["compression"] == 43);
  CHECK(spec.source["published"] == spec.published);
  const auto trials = expand_trials(spec);
  REQUIRE(trials.size() == 4);  // "set" axes reach the dense baselines too
  CHECK(trials[1]["kind"] == "dense");
  CHECK(trials[1]["experiment"]["training"]["batch_size"] == 4);
  CHECK(trials[3]["experiment"]["training"]["size_surrogate"] == "mean");
  CHECK(trials[3]["point"] == json{{"seed", 7}, {"training.batch_size", 4},
                                   {"training.size_surrogate", "mean"}});
  j["published"][0]["size_mb"] = "/paper/missing";
  CHECK_THROWS_WITH(parse_sweep_spec(j, "", dir.file("ref.json")),
                    Contains("/paper/missing is not in"));
  CHECK_THROWS_WITH(parse_sweep_spec(j), Contains("pass --reference"));
}

TEST_CASE("a set axis the dense build drops gives one dense baseline, not one per value", "[sweep]") {
  json j = spec_with({{"set", {{"model.tensorized.embedding.ranks", {2, 3, 4}}, {"training.batch_size", {2, 3}}}},
                      {"targets", {{"loss", {2.5}}, {"size_ratio", {0.5}}}}});
  j["baselines"] = {"dense"};
  const auto trials = expand_trials(parse_sweep_spec(j));
  // Dense: one per batch size (the dense build keeps it; the base has 4), none per embedding
  // rank; late: 3 x 2.
  REQUIRE(trials.size() == 2 + 6);
  for (int i = 0; i < 2; ++i) {
    CHECK(trials[i]["kind"] == "dense");
    CHECK(trials[i]["point"] == json{{"seed", 7}, {"training.batch_size", 2 + i}});
  }
  CHECK(trials[2]["kind"] == "late");
}

TEST_CASE("precision is an axis like any setting, checked before anything runs", "[sweep]") {
  const auto trials =
      expand_trials(parse_sweep_spec(spec_with({{"set", {{"training.precision", {"fp32", "bf16"}}}}})));
  REQUIRE(trials.size() == 2);
  CHECK(trials[1]["point"]["training.precision"] == "bf16");
  CHECK(parse_experiment(trials[1]["experiment"]).training.precision == Precision::Bf16);
  CHECK(parse_experiment(trials[0]["experiment"]).training.precision == Precision::Fp32);
  CHECK_THROWS_WITH(
      expand_trials(parse_sweep_spec(spec_with({{"set", {{"training.precision", {"fp16"}}}}}))),
      Contains("training.precision") && Contains("fp32"));
}

TEST_CASE("spec files name their base experiment relative to themselves", "[sweep]") {
  comera::testing::TempDir dir;
  std::ofstream(dir.file("base.json")) << tiny_experiment().dump();
  std::ofstream(dir.file("s.json")) << json{{"base", "base.json"}, {"axes", {{"gamma", {0.5}}}}}.dump();
  const auto spec = load_sweep_spec(dir.file("s.json"));
  CHECK(spec.name == "s");
  CHECK(spec.base == tiny_experiment());
  CHECK(spec.objectives == "eval_loss:min,size:min");
  std::ofstream(dir.file("bad.json")) << json{{"base", "nowhere.json"}, {"axes", json::object()}}.dump();
  CHECK_THROWS_WITH(load_sweep_spec(dir.file("bad.json")), Contains("nowhere.json"));
}

TEST_CASE("shards split the trials deterministically, disjoint and complete", "[sweep]") {
  CHECK(parse_shard("2/3").index == 2);
  CHECK(parse_shard("2/3").count == 3);
  for (const char* bad : {"0/2", "3/2", "a/b", "1/0", "1/2x", "12", "/2"})
    CHECK_THROWS_WITH(parse_shard(bad), Contains("expected i/N"));
  for (size_t total = 0; total < 25; ++total)
    for (size_t n = 1; n <= 6; ++n) {
      std::vector<int> seen(total, 0);
      for (size_t i = 1; i <= n; ++i) {
        const auto positions = shard_positions(total, {i, n});
        CHECK(positions == shard_positions(total, {i, n}));
        for (size_t p : positions) ++seen.at(p);
        // Round-robin: shard sizes differ by at most one.
        CHECK(positions.size() + 1 >= total / n);
        CHECK(positions.size() <= total / n + 1);
      }
      CHECK(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
    }
}

TEST_CASE("step-measuring sweeps carry their step settings in every trial", "[sweep]") {
  json j = spec_with({{"set", {{"training.batch_size", {1, 32}}}}});
  j["measure"] = "step";
  j["step"] = {{"length", 32}, {"repeats", 3}};
  j["baselines"] = {"dense"};
  const auto trials = expand_trials(parse_sweep_spec(j));
  REQUIRE(trials.size() == 4);
  for (const auto& t : trials) CHECK(t["step"] == json{{"length", 32}, {"warmup", 2}, {"repeats", 3}});
  CHECK(trials[3]["experiment"]["training"]["batch_size"] == 32);
  j.erase("measure");
  CHECK_THROWS_WITH(parse_sweep_spec(j), Contains("only read with \"measure\": \"step\""));
  // Training sweeps' configs have no "step" (their hashes stay as they were).
  CHECK_FALSE(expand_trials(parse_sweep_spec(spec_with({{"gamma", {0.1}}})))[0].contains("step"));
}

TEST_CASE("overrides change the base of every trial without labelling points", "[sweep]") {
  json j = spec_with({{"gamma", {0.1}}});
  j["overrides"] = {{"training.epochs", 4}, {"data.train_limit", 100}, {"training.late_stage", nullptr}};
  const auto trials = expand_trials(parse_sweep_spec(j));
  REQUIRE(trials.size() == 1);
  CHECK(trials[0]["experiment"]["training"]["epochs"] == 4);
  CHECK(trials[0]["experiment"]["data"]["train_limit"] == 100);
  CHECK(trials[0]["kind"] == "early");
  CHECK(trials[0]["point"] == json{{"seed", 7}, {"gamma", 0.1}});
  j["overrides"] = {1, 2};
  CHECK_THROWS_WITH(parse_sweep_spec(j), Contains("overrides: expected"));
}

TEST_CASE("every sweep spec in experiments/sweeps loads and expands to trials that parse",
          "[sweep]") {
  int specs = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(comera::source_dir() + "/experiments/sweeps")) {
    const auto json = read_json_file(entry.path().string());
    if (!json.contains("axes") && !json.contains("targets")) continue;  // a base experiment
    INFO(entry.path());
    const auto spec = load_sweep_spec(entry.path().string());
    auto trials = expand_trials(spec);
    if (spec.sampling.adaptive)
      // Its proposals at the space's corners: every range at its minimum, then at its maximum.
      for (const bool high : {false, true}) {
        std::vector<Choice> choices;
        for (size_t i = 1; i < spec.axes.size(); ++i) {
          const auto& axis = spec.axes[i];
          choices.push_back(axis.range ? range_choice(axis, high ? axis.range->max : axis.range->min)
                                       : axis.choices[high ? axis.choices.size() - 1 : 0]);
        }
        trials.push_back(point_trial(spec, choices));
      }
    CHECK(trials.size() >= 2);
    for (const auto& t : trials) {
      CHECK_NOTHROW(parse_experiment(t.at("experiment")));
      // The experiment as recorded (ExperimentConfig::to_json) reads back as the same experiment.
      const auto recorded = parse_experiment(t.at("experiment")).to_json();
      INFO(recorded.dump());
      CHECK(comera::testing::reads_back(recorded) == "");
    }
    ++specs;
  }
  CHECK(specs >= 1);
}

TEST_CASE("the contraction axis sets each trial's training.contraction, which parses", "[sweep]") {
  const auto trials = expand_trials(
      parse_sweep_spec(spec_with({{"contraction", {"tuned", "merged", "core-by-core", "reconstruct"}}})));
  std::set<std::string> policies;
  for (const auto& t : trials) {
    const auto e = parse_experiment(t.at("experiment"));
    policies.insert(e.training.contraction);
  }
  CHECK(policies == std::set<std::string>{"tuned", "merged", "core-by-core", "reconstruct"});
}

TEST_CASE("an objective some of a sweep's trials never record is refused before any trial", "[sweep]") {
  // Late-stage targets: the dense and early baselines have no late stage.
  json j = spec_with({{"targets", {{"loss", {1.0}}, {"size_ratio", {0.5}}}}});
  j["objectives"] = "loss_target:min,size:min";
  CHECK(expand_trials(parse_sweep_spec(j)).size() == 1);
  j["baselines"] = {"dense"};
  CHECK_THROWS_WITH(expand_trials(parse_sweep_spec(j)),
                    Contains("objectives: 'loss_target' is not recorded by its dense trials (they have no late stage)"));
  // The all-reduce figures: one process records none.
  j = spec_with({{"seeds", {0}}});
  j["objectives"] = "all_reduce_mb:min,size:min";
  CHECK_THROWS_WITH(expand_trials(parse_sweep_spec(j)),
                    Contains("'all_reduce_mb' is not recorded by its late trials (they train in one process"));
}
