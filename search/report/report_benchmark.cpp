#include "search/report/report_benchmark.h"

#include "core/util/error.h"
#include "core/util/output_file.h"
#include "search/environment.h"
#include "search/report/browser_check.h"
#include "search/report/report_data.h"
#include "search/report/report_page.h"
#include "search/store/epoch_metrics.h"
#include "search/store/layer_ranks.h"
#include "search/store/objectives.h"
#include "search/store/studies.h"
#include "search/store/trial_queue.h"

#include <SQLiteCpp/Transaction.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>

namespace comera::report {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double megabytes(const std::string& path) {
  std::error_code ec;
  return static_cast<double>(std::filesystem::file_size(path, ec)) / 1e6;
}

// One synthetic trial's run: ranks shrink and accuracy climbs toward a level set by the final
// size; after the middle epoch the late stage. Complete, or failed, diverged or killed part way.
void write_trial(store::ResultsDb& db, const store::Trial& trial, const ReportBenchOptions& o, std::mt19937_64& rng,
                 const std::string& worker) {
  std::uniform_real_distribution<double> unit(0, 1);
  const int64_t max_rank = 32;
  const double keep = 0.05 + 0.95 * unit(rng);  // share of the ranks left at the end
  const double noise = 0.02 * (unit(rng) - 0.5);
  const double roll = unit(rng);
  const auto state = roll < 0.96   ? store::TrialState::Complete
                     : roll < 0.98 ? store::TrialState::Failed
                     : roll < 0.99 ? store::TrialState::Diverged
                                   : store::TrialState::Killed;
  const int64_t epochs = state == store::TrialState::Complete ? o.epochs : 1 + static_cast<int64_t>(unit(rng) * (o.epochs - 1));
  store::ObjectiveValues last;
  {
    SQLite::Transaction tx(db.sql());
    for (int64_t e = 0; e < epochs; ++e) {
      const double t = static_cast<double>(e + 1) / static_cast<double>(o.epochs);
      const double share = 1 - (1 - keep) * std::min(1.0, 2 * t);
      const int64_t rank = std::max<int64_t>(1, std::lround(max_rank * share));
      const double size = static_cast<double>(o.layers) * 2 * 16 * rank * (1 + rank) + 5000;
      const double accuracy = std::min(0.95, 0.5 + 0.08 * std::log10(size) * (1 - std::exp(-8 * t)) + noise);
      const double loss = 2.5 * (1 - accuracy) + 0.1 * std::exp(-4 * t);
      last = {{"train_loss", loss * 0.95}, {"eval_loss", loss}, {"accuracy", accuracy}, {"size", size},
              {"compression", 2.0e6 / size}};
      store::write_epoch(db.sql(), trial.id, {e, (e + 1) * 100, t > 0.5 ? "late" : "early", last, ""});
      std::vector<store::LayerRanks> layers;
      for (int64_t l = 0; l < o.layers; ++l)
        layers.push_back({"encoder." + std::to_string(l), {1, rank, rank, 1}, 2 * 16 * rank * (1 + rank)});
      store::write_layer_ranks(db.sql(), trial.id, e, layers);
    }
    tx.commit();
  }
  store::finish_trial(db, trial.id, worker, state, state == store::TrialState::Complete ? last : store::ObjectiveValues{},
                      state == store::TrialState::Failed ? "synthetic failure" : "");
}

}  // namespace

nlohmann::json ReportBenchResult::to_json() const {
  return {{"synthetic", true},      {"trials", trials},       {"epochs", epochs},       {"layers", layers},
          {"database_mb", database_mb}, {"generate_s", generate_s}, {"report_s", report_s}, {"page_mb", page_mb},
          {"browser_s", browser_s}, {"loaded_ms", loaded_ms}, {"script_ms", script_ms}, {"drawn", drawn},
          {"browser", browser},     {"database", database},   {"page", page}};
}

ReportBenchResult bench_report(const ReportBenchOptions& o) {
  if (o.trials < 1 || o.epochs < 2 || o.layers < 1)
    throw Error("the report benchmark needs at least 1 trial, 2 epochs and 1 layer");
  if (o.folder.empty()) throw Error("the report benchmark needs a folder for its database and page");
  if (std::filesystem::exists(o.folder) && !std::filesystem::is_directory(o.folder))
    throw Error("--folder " + o.folder + " is a file, not a folder: give a folder for the database and page");
  ReportBenchResult r;
  r.trials = o.trials;
  r.epochs = o.epochs;
  r.layers = o.layers;
  r.browser = headless_browser();  // before minutes of work, not after
  std::filesystem::create_directories(o.folder);
  r.database = (std::filesystem::path(o.folder) / "synthetic_report.db").string();
  r.page = (std::filesystem::path(o.folder) / "synthetic_report.html").string();
  const OutputFile page_file(r.page, "the benchmark's page", {r.database});
  if (std::filesystem::exists(r.database))
    throw Error(r.database + " exists: the benchmark makes its database afresh; remove it or give another folder");

  auto start = std::chrono::steady_clock::now();
  {
    auto db = store::ResultsDb::open(r.database);
    const auto study = store::create_or_get_study(db, "synthetic", {{"synthetic", true}}, "size:min,accuracy:max");
    std::vector<nlohmann::json> configs;
    for (int64_t i = 0; i < o.trials; ++i)
      configs.push_back({{"kind", "late"}, {"point", {{"i", i}}}, {"seed", 0}, {"experiment", {{"synthetic", true}}}});
    store::enqueue_trials(db, study, configs);
    std::mt19937_64 rng(o.seed);
    const auto env = current_environment("cpu");
    for (int64_t i = 0; i < o.trials; ++i) {
      const auto trial = store::claim_next_trial(db, study.id, "synthetic", env);
      write_trial(db, *trial, o, rng, "synthetic");
      if (o.on_progress && ((i + 1) % 500 == 0 || i + 1 == o.trials))
        o.on_progress("synthetic database: " + std::to_string(i + 1) + " of " + std::to_string(o.trials) + " trials");
    }
  }
  r.generate_s = seconds_since(start);
  r.database_mb = megabytes(r.database);

  start = std::chrono::steady_clock::now();
  {
    auto db = store::ResultsDb::open(r.database, store::ResultsDb::Mode::ReadOnly);
    ReportOptions ro;
    ro.max_detailed = o.max_detailed;
    ro.max_epochs = o.max_epochs;
    const std::string html = report_html(report_data(db, ro), "comera report benchmark (synthetic data)");
    page_file.write_text([&html](std::ostream& out) { out << html; });
  }
  r.report_s = seconds_since(start);
  r.page_mb = megabytes(r.page);
  if (o.on_progress) o.on_progress("opening the page in " + r.browser);
  const auto check = check_in_browser(r.page);
  r.browser_s = check.seconds;
  r.loaded_ms = check.selftest.value("loaded_ms", 0.0);
  r.script_ms = check.selftest.value("script_ms", 0.0);
  if (!check.selftest["studies"].empty()) r.drawn = check.selftest["studies"][0]["before"]["counts"];
  if (!check.console.empty() || !check.selftest["errors"].empty())
    throw Error("the page logged errors: " + check.selftest["errors"].dump() +
                (check.console.empty() ? "" : " " + check.console.front()));
  return r;
}

}  // namespace comera::report
