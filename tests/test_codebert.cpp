// The CodeBERT presets (the paper's CodeBERT-large shape with the TT configuration that reaches
// its 4.23x whole-model compression, and the small pre-training preset), loaded, expanded and
// built; and the loss curves of their runs, from the results database.
#include "core/layers/size.h"
#include "core/models/model_config.h"
#include "core/training/experiment.h"
#include "core/util/source_dir.h"
#include "search/plot/curve_plot.h"
#include "search/runs/trial_config.h"
#include "search/store/epoch_metrics.h"
#include "search/store/studies.h"
#include "search/store/trial_queue.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"

#include <torch/nn/module.h>

#include <cmath>
#include <fstream>

using namespace comera;
using Catch::Matchers::Contains;

namespace {

std::string preset(const std::string& name) { return comera::source_dir() + "/experiments/" + name; }

// A run's eval curve and its train curve dashed, titled with quotes to escape.
plot::CurvePlot two_curves(plot::Curve eval, plot::Curve train) {
  plot::CurvePlot p;
  p.title = "t \"q\"";
  p.y_label = "loss";
  train.dashed = true;
  p.curves = {std::move(eval), std::move(train)};
  return p;
}

}  // namespace

TEST_CASE("codebert_large is CodeBERT-large's shape, 4.2x smaller tensorized", "[codebert]") {
  const auto e = load_experiment(preset("codebert_large.json"));
  const auto c = parse_model_config(e.model.settings);
  CHECK(c.layers == 24);
  CHECK(c.d_model == 1024);
  CHECK(c.heads == 16);
  CHECK(c.ffn == 4096);
  CHECK(c.vocab == 50265);
  CHECK(c.masked_lm);
  // The encoder's linear layers are TT, the tied word embedding dense.
  CHECK(c.attention.tensorized);
  CHECK(c.ffn_in.tensorized);
  CHECK(c.ffn_out.tensorized);
  CHECK_FALSE(c.embedding.tensorized);
  CHECK(e.training.task.kind == "masked_lm");
  CHECK(e.training.task.mask_probability == 0.15);
  CHECK(e.training.length_at(0, 0) == 128);
  CHECK(e.training.length_at(0, 90000) == 512);
  CHECK(e.data.format == "codesearchnet");
  CHECK(e.data.max_length == 512);

  const auto task = e.model.build(e.training.task, DataInfo{});
  const auto size = model_size(task->model());
  // 24 x 12.6M encoder weights + 51.5M embedding + positions, norms, biases and the head.
  CHECK(size.dense_model_params == Approx(355.4e6).epsilon(0.005));
  INFO("compression " << size.compression() << ", " << size.total_params << " parameters");
  CHECK(size.compression() == Approx(4.23).margin(0.05));
  CHECK(size.layers.size() == 24 * 6);
}

TEST_CASE("small_codebert pre-trains on the code corpus in two length phases", "[codebert]") {
  const auto e = load_experiment(preset("small_codebert.json"));
  const auto c = parse_model_config(e.model.settings);
  CHECK(c.d_model == 64);
  CHECK(c.embedding.tensorized);
  CHECK(c.classes == 0);
  CHECK(e.training.length_at(1, 0) == 64);
  CHECK(e.training.length_at(2, 0) == 128);
  CHECK(e.data.format == "codesearchnet");
  CHECK(e.data.settings["examples"] == "bimodal");
  CHECK(e.data.train == "train");
  CHECK(e.data.eval == "valid");
  const auto task = e.model.build(e.training.task, DataInfo{});
  CHECK(model_size(task->model()).compression() > 5);
  const auto dense = e.model.dense().build(e.training.task, DataInfo{});
  CHECK(model_size(dense->model()).compression() == 1);
}

TEST_CASE("loss curves come from the database's epochs, in a gnuplot program", "[codebert]") {
  comera::testing::TempDir dir;
  auto db = store::ResultsDb::open(dir.file("r.db"));
  const auto study = store::create_or_get_study(db, "runs", nlohmann::json::object());
  using nlohmann::json;
  // Configs as `comera train` stores them: the name is the experiment's (config.experiment.name).
  auto run = [](const std::string& name, uint64_t seed) { return trial_config(json{{"name", name}}, seed, {}, "early"); };
  const auto ids = store::enqueue_trials(
      db, study, std::vector<json>{run("small_codebert", 0), run("small_codebert_dense", 0), run("small_codebert", 1)});
  store::record_epoch(db, ids[2], {0, 10, "early", {{"eval_loss", 6.5}, {"train_loss", 7.0}}, ""});
  store::record_epoch(db, ids[2], {1, 20, "early", {{"eval_loss", 5.25}, {"train_loss", NAN}}, ""});
  // The newest run of a name.
  CHECK(plot::latest_trial_named(db, "small_codebert") == ids[2]);
  CHECK(plot::latest_trial_named(db, "small_codebert_dense") == ids[1]);
  CHECK(plot::latest_trial_named(db, "other") == 0);
  const auto eval = plot::trial_curve(db, ids[2], "eval_loss", "tt");
  CHECK(eval.points == std::vector<std::pair<double, double>>{{0, 6.5}, {1, 5.25}});  // as recorded, 0 first
  CHECK(plot::trial_curve(db, ids[2], "train_loss", "tt").points.size() == 1);  // NaN left out
  CHECK(plot::trial_curve(db, ids[0], "eval_loss", "none").points.empty());

  const auto p = two_curves(eval, plot::trial_curve(db, ids[2], "train_loss", "train"));
  const auto script = plot::curve_script(p, "/x/out.png");
  CHECK_THAT(script, Contains("set output \"/x/out.png\"") && Contains("set title \"t \\\"q\\\"\"") &&
                         Contains("$c0 << EOD\n0 6.5\n1 5.25\nEOD") && Contains("dt 2") &&
                         Contains("title \"train\""));
}

TEST_CASE("comera plot curves numbers epochs as the database does, 0 first", "[codebert][cli][gnuplot]") {
  comera::testing::TempDir dir;
  {
    auto db = store::ResultsDb::open(dir.file("r.db"));
    const auto study = store::create_or_get_study(db, "runs", nlohmann::json::object());
    for (const char* name : {"small_codebert", "small_codebert_dense"}) {
      const auto id = store::enqueue_trials(db, study, std::vector<nlohmann::json>{trial_config(nlohmann::json{{"name", name}}, 0, {}, "early")}).at(0);
      store::record_epoch(db, id, {0, 10, "early", {{"eval_loss", 6.5}, {"train_loss", 7.0}}, ""});
      store::record_epoch(db, id, {1, 20, "early", {{"eval_loss", 5.25}, {"train_loss", 6.0}}, ""});
    }
  }
  const std::string args = "plot curves --db " + dir.file("r.db") + " --name small_codebert --out " + dir.file("c.png");
  const auto j = nlohmann::json::parse(comera::testing::run_cli(args + " --json 2>/dev/null").output);
  CHECK(j["runs"][0]["epochs"][0]["epoch"] == 0);
  CHECK(j["runs"][1]["epochs"][1]["epoch"] == 1);
  const auto text = comera::testing::run_cli(args).output;
  CHECK_THAT(text, Contains("\n| 0 | 6.5000 |") && Contains("\n| 1 | 5.2500 |"));
}

TEST_CASE("comera plot curves --trials names a trial the database lacks", "[codebert][cli]") {
  comera::testing::TempDir dir;
  store::ResultsDb::open(dir.file("r.db"));
  const auto r = comera::testing::run_cli("plot curves --db " + dir.file("r.db") + " --trials 999 --out " + dir.file("c.png"));
  INFO(r.output);
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Contains("no trial 999 in") && Contains("runs list") && !Contains("no recorded epoch"));
}

TEST_CASE("loss curves: gnuplot draws the PNG", "[codebert][gnuplot]") {
  comera::testing::TempDir dir;
  plot::Curve eval, train;
  eval.points = {{1, 6.5}, {2, 5.25}};
  train.points = {{1, 7.0}};
  plot::write_curve_png(two_curves(eval, train), dir.file("plots/curves.png"));
  std::ifstream png(dir.file("plots/curves.png"), std::ios::binary);
  char magic[4] = {};
  png.read(magic, 4);
  CHECK(std::string(magic + 1, 3) == "PNG");
}
