// `comera report`: the page embeds what `pareto --format json` and `runs show --json` print,
// draws every trial in a real (headless) browser, redraws for another pair of objectives,
// bounds what it embeds, and never writes over an input.
#include "search/report/browser_check.h"
#include "search/report/report_data.h"
#include "search/store/epoch_metrics.h"
#include "search/store/layer_ranks.h"
#include "search/store/studies.h"
#include "search/store/trial_queue.h"
#include "search/store/trials.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/quickstart_db.h"
#include "tests/support/temp_dir.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <sstream>

using Catch::Matchers::Contains;
using comera::testing::run_from_root;
using comera::testing::TempDir;
using nlohmann::json;
namespace store = comera::store;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The JSON document the page carries.
json embedded_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"comera-data\">";
  const auto begin = html.find(open);
  REQUIRE(begin != std::string::npos);
  const auto end = html.find("</script>", begin);
  REQUIRE(end != std::string::npos);
  return json::parse(html.substr(begin + open.size(), end - begin - open.size()));
}

// The quickstart database with one trial marked failed and one killed, as a sweep leaves them
// (their epochs kept, no objectives), so that the page has several statuses to draw.
std::string quickstart_with_statuses(const TempDir& dir) {
  const auto made = comera::testing::make_quickstart_db(dir, dir.file("results"));
  SQLite::Database db(made.db, SQLite::OPEN_READWRITE);
  db.exec("UPDATE trials SET state = 'failed', error = 'out of memory (set by the test)' WHERE number = 6");
  db.exec("UPDATE trials SET state = 'killed' WHERE number = 7");
  db.exec("DELETE FROM objectives WHERE trial_id IN (SELECT id FROM trials WHERE number IN (6, 7))");
  return made.db;
}

std::map<std::string, int> states_in(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  SQLite::Statement q(db, "SELECT state, COUNT(*) FROM trials GROUP BY state");
  std::map<std::string, int> out;
  while (q.executeStep()) out[q.getColumn(0).getString()] = q.getColumn(1).getInt();
  return out;
}

}  // namespace

TEST_CASE("the report embeds what pareto --format json and runs show --json print", "[report][cli]") {
  TempDir dir;
  const std::string db = quickstart_with_statuses(dir);
  const std::string page = dir.file("report.html");
  run_from_root("report --db " + db + " -o " + page + " --quiet");
  const json data = embedded_data(read_text(page));
  REQUIRE(data["studies"].size() == 1);
  const json& study = data["studies"][0];
  CHECK(study["name"] == "quickstart");
  // The base experiment names itself and says what it trains (and when its data is synthetic).
  CHECK_THAT(study["experiment"]["description"].get<std::string>(), Contains("WordNet"));

  CHECK(study["front"] == json::parse(run_from_root("pareto --db " + db + " --study quickstart --all --format json")));
  const json listed = json::parse(run_from_root("runs list --db " + db + " --study quickstart --json"));
  REQUIRE(study["trials"].size() == listed.size());
  for (size_t i = 0; i < listed.size(); ++i) {
    json row = study["trials"][i];
    for (const char* added : {"point", "diff", "last_epoch", "error"}) row.erase(added);
    CHECK(row == listed[i]);
  }
  // Every trial of this small study has its whole record in the page, exactly as runs show has it.
  REQUIRE(study["details"].size() == listed.size());
  for (const auto& [id, detail] : study["details"].items())
    CHECK(detail == json::parse(run_from_root("runs show " + id + " --db " + db + " --json")));

  // Each trial's settings against the study's base: a proposed late trial differs in its point's
  // embedding ranks, L0 and S0; the dense baseline has no tensorized layers and no late stage.
  const json& dense = study["trials"][0];
  CHECK(dense["kind"] == "dense");
  CHECK(dense["diff"]["model.tensorized"].is_null());
  CHECK(dense["diff"]["training.late_stage"].is_null());
  const json& late = study["trials"][2];
  CHECK(late["kind"] == "late");
  CHECK(late["diff"] == json{{"model.tensorized.embedding.ranks", late["point"]["model.tensorized.embedding.ranks"]},
                             {"training.late_stage.loss_target", late["point"]["loss_target"]},
                             {"training.late_stage.size_ratio", late["point"]["size_ratio"]}});
  // A trial without objectives is placed by its last epoch's metrics.
  const json& failed = study["trials"][5];
  CHECK(failed["state"] == "failed");
  CHECK(failed["objectives"].empty());
  CHECK(failed["last_epoch"]["accuracy"].is_number());
  CHECK(failed["error"] == "out of memory (set by the test)");
  // Hypervolume after each complete trial, in the order they ended: the last is the front's.
  const json& progress = study["hypervolume_progress"];
  REQUIRE(progress.size() == 7);
  CHECK(progress.back()["hypervolume"] == study["front"]["hypervolume"]);
  CHECK(progress.front()["trials"] == 1);
  CHECK(data["environments"].size() == 1);
  CHECK(data["environments"][0]["trials"] == 9);
}

TEST_CASE("the report in headless Chromium: every trial drawn, a redraw, no errors", "[report][cli][browser]") {
  TempDir dir;
  const std::string db = quickstart_with_statuses(dir);
  const std::string page = dir.file("report.html");
  run_from_root("report --db " + db + " -o " + page + " --quiet");
  const auto check = comera::report::check_in_browser(page);
  INFO(check.selftest.dump(2));
  CHECK(check.console.empty());
  CHECK(check.selftest["errors"].empty());
  REQUIRE(check.selftest["studies"].size() == 1);
  const json& found = check.selftest["studies"][0];

  const auto states = states_in(db);
  REQUIRE(states == std::map<std::string, int>{{"complete", 7}, {"failed", 1}, {"killed", 1}});
  const json data = embedded_data(read_text(page));
  int front = 0;
  for (const auto& row : data["studies"][0]["front"]["trials"]) front += row["front"] == "*";
  for (const char* when : {"before", "after"}) {
    INFO(when);
    const json& drawn = found[when]["counts"];
    CHECK(found[when]["undrawn"].empty());  // every trial has values for these metrics
    CHECK(drawn["front"].get<int>() + drawn["dominated"].get<int>() == states.at("complete"));
    CHECK(drawn["failed"] == states.at("failed"));
    CHECK(drawn["killed"] == states.at("killed"));
    CHECK(drawn["queued"] == 0);
    CHECK(found[when]["painted"].get<int>() > 2000);  // the chart is on the canvas, not blank
  }
  // The study's own pair first, with the front the database has; then another metric redrawn.
  CHECK(found["before"]["x"] == "size");
  CHECK(found["before"]["y"] == "accuracy");
  CHECK(found["before"]["counts"]["front"] == front);
  CHECK(found["after"]["y"] != found["before"]["y"]);
  CHECK(found["after"]["y_axis"] != found["before"]["y_axis"]);
  CHECK(found["curve_series"].get<int>() > 0);
  CHECK(found["rank_cells"].get<int>() > 0);
  CHECK(check.selftest["loaded_ms"].get<double>() > 0);
}

TEST_CASE("a study description holding <!--<script leaves the page whole in headless Chromium",
          "[report][cli][browser]") {
  TempDir dir;
  const std::string db = quickstart_with_statuses(dir);
  const std::string description = "<!--<script> and </script> in a description";
  {
    SQLite::Database sql(db, SQLite::OPEN_READWRITE);
    // The page shows the study spec's base as what was trained; the trials' configs hold it too.
    SQLite::Statement update(sql, "UPDATE trials SET config = json_set(config, '$.experiment.description', ?)");
    update.bind(1, description);
    update.exec();
    SQLite::Statement spec(sql, "UPDATE studies SET spec = json_set(spec, '$.base.description', ?)");
    spec.bind(1, description);
    spec.exec();
  }
  const std::string page = dir.file("report.html");
  run_from_root("report --db " + db + " -o " + page + " --quiet");
  const std::string html = read_text(page);
  CHECK(html.find("<!--<script") == std::string::npos);
  CHECK(embedded_data(html)["studies"][0]["experiment"]["description"] == description);
  const auto check = comera::report::check_in_browser(page);
  INFO(check.selftest.dump(2));
  CHECK(check.console.empty());
  CHECK(check.selftest["errors"].empty());
  CHECK(check.selftest["studies"].size() == 1);
}

TEST_CASE("report data: long trials sampled evenly, first and last epochs kept; detail bounded",
          "[report]") {
  TempDir dir;
  auto db = store::ResultsDb::open(dir.file("r.db"));
  const auto study = store::create_or_get_study(db, "s", json::object(), "eval_loss:min,size:min");
  std::vector<json> configs;
  for (int i = 0; i < 3; ++i) configs.push_back({{"kind", "late"}, {"point", {{"i", i}}}, {"seed", 0}});
  const auto ids = store::enqueue_trials(db, study, configs);
  for (size_t t = 0; t < ids.size(); ++t) {
    for (int e = 0; e < 10; ++e) {
      store::record_epoch(db, ids[t], {e, 10 * (e + 1), e < 5 ? "early" : "late",
                                       {{"eval_loss", 2.0 - 0.1 * e + 0.05 * t}, {"size", 1000.0 - 10 * e}}, ""});
      store::record_layer_ranks(db, ids[t], e, {{"fc", {1, 8 - e / 2, 1}, 100}});
    }
  }
  comera::report::ReportOptions options;
  options.max_epochs = 4;
  options.max_detailed = 2;
  const json data = comera::report::report_data(db, options);
  const json& s = data["studies"][0];
  CHECK(s["front"].is_null());  // nothing complete: no front, and the page says why
  CHECK_THAT(s["front_error"].get<std::string>(), Contains("complete") || Contains("recorded"));
  REQUIRE(s["details"].size() == 2);  // the latest trials when there is no front
  CHECK(s["details"].contains(std::to_string(ids[2])));
  CHECK(s["details"].contains(std::to_string(ids[1])));
  const json& d = s["details"][std::to_string(ids[2])];
  std::vector<int> epochs;
  for (const auto& row : d["epochs"]) epochs.push_back(row["epoch"]);
  CHECK(epochs == std::vector<int>{0, 3, 6, 9});
  CHECK(d["sampled_epochs"] == json{{"shown", 4}, {"recorded", 10}});
  CHECK(d["ranks"].size() == 4);
  CHECK(d["ranks"]["9"][0]["ranks"] == json{1, 4, 1});
  // Every trial is listed, with its last epoch's metrics.
  REQUIRE(s["trials"].size() == 3);
  CHECK(s["trials"][0]["last_epoch"]["eval_loss"].get<double>() == Approx(2.0 - 0.9));
  CHECK(s["directions"] == json{{"eval_loss", "min"}, {"size", "min"}});
}

TEST_CASE("comera report refuses bad input before any work and writes over no input", "[report][cli]") {
  TempDir dir;
  const std::string db = comera::testing::make_quickstart_db(dir, dir.file("results")).db;
  const std::string spec = dir.file("quickstart.json");  // the spec make_quickstart_db ran
  const std::string before = read_text(db);
  auto fails = [](const std::string& args) {
    const auto r = comera::testing::run_cli(args);
    INFO(r.output);
    CHECK(r.status != 0);
    return r.output;
  };
  CHECK_THAT(fails("report --db " + db + " -o " + db), Contains("-o") && Contains(db));
  CHECK(read_text(db) == before);
  CHECK_THAT(fails("report --db " + db + " --study nope -o " + dir.file("a.html")),
             Contains("no study 'nope'") && Contains("quickstart"));
  CHECK_THAT(fails("report --db " + db + " --max-epochs 1 -o " + dir.file("a.html")), Contains("--max-epochs"));
  CHECK_THAT(fails("report --db " + db), Contains("-o FILE.html"));
  CHECK_THAT(fails("report --db " + dir.file("missing.db") + " -o " + dir.file("a.html")), Contains("missing.db"));
  CHECK_FALSE(std::ifstream(dir.file("a.html")).good());
  CHECK_THAT(fails("sweep " + spec + " --db " + db + " --quiet --no-front --report " + spec), Contains("--report"));
  CHECK(read_text(db) == before);
  // A sweep with nothing left to run still writes its study's report.
  run_from_root("sweep " + spec + " --db " + db + " --quiet --no-front --report " + dir.file("sweep.html"));
  const json data = embedded_data(read_text(dir.file("sweep.html")));
  REQUIRE(data["studies"].size() == 1);
  CHECK(data["studies"][0]["trials"].size() == 9);
  // An earlier page stays whole when a later one cannot be made.
  std::ofstream(dir.file("old.html")) << "old page";
  fails("report --db " + db + " --study nope -o " + dir.file("old.html"));
  CHECK(read_text(dir.file("old.html")) == "old page");
}
