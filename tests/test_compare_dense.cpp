// scripts/compare_dense.sh --seeds N: the means and standard errors it prints are those of the N
// runs of each build, which this test makes itself with `comera train --seed S --json`.
#include "core/util/process.h"
#include "core/util/source_dir.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/quickstart_db.h"
#include "tests/support/temp_dir.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

using Catch::Matchers::Contains;

namespace {

std::string mean_se(const std::vector<double>& values, int digits) {
  double mean = 0;
  for (double v : values) mean += v / static_cast<double>(values.size());
  double var = 0;
  for (double v : values) var += (v - mean) * (v - mean) / static_cast<double>(values.size() - 1);
  char text[96];
  std::snprintf(text, sizeof text, "%.*f ± %.*f", digits, mean, digits, std::sqrt(var / static_cast<double>(values.size())));
  return text;
}

}  // namespace

TEST_CASE("compare_dense.sh --seeds prints each build's mean and standard error over seeds", "[scripts][cli]") {
  comera::testing::TempDir dir;
  const std::string data = dir.file("wordnet");
  comera::testing::run_from_root("data build-wordnet --source " + comera::source_dir() + "/tests/fixtures/wordnet --out " + data);
  const std::string config = comera::source_dir() + "/experiments/sweeps/quickstart_base.json";
  std::vector<double> tt_loss, dense_loss, gap;
  for (int seed = 1; seed <= 3; ++seed) {
    auto final_epoch = [&](const std::string& build) {
      std::vector<std::string> argv = {comera::testing::cli_path(), "train", "--config", config, "--data", data,
                                       "--seed", std::to_string(seed), "--threads", "1", "--no-db", "--quiet", "--json",
                                       "--checkpoint", dir.file("s" + std::to_string(seed) + build + ".pt")};
      if (build == "dense") argv.push_back("--dense");
      const auto out = comera::run_process(argv, "comera train", comera::ErrorOutput::Discard);
      REQUIRE(out.status == 0);
      return nlohmann::json::parse(out.output)["epochs"].back();
    };
    const auto tt = final_epoch("tensorized"), dense = final_epoch("dense");
    tt_loss.push_back(tt["eval_loss"]);
    dense_loss.push_back(dense["eval_loss"]);
    gap.push_back(100 * (tt["accuracy"].get<double>() - dense["accuracy"].get<double>()));
  }
  // COMERA: the binary under test, wherever the build is (not the source tree's build/).
  const auto r = comera::run_process({"env", "COMERA=" + comera::testing::cli_path(), "bash",
                                      comera::source_dir() + "/scripts/compare_dense.sh", "--seeds", "3", "--jobs", "2",
                                      "--fixed-ranks", config, "--data", data, "--threads", "1"},
                                     "compare_dense.sh", comera::ErrorOutput::Discard);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output, Contains("3 seeds (1..3)"));
  CHECK_THAT(r.output, Contains("| 2 | late | ") && Contains(mean_se(tt_loss, 4)) && Contains(mean_se(dense_loss, 4)));
  CHECK_THAT(r.output, Contains("gap " + [&] {
               std::string text = mean_se(gap, 2);
               return (text[0] == '-' ? "" : "+") + text;
             }() + " points"));
  CHECK_THAT(r.output, Contains("seed 3:"));
  // The fixed-rank runs end at the adaptive runs' sizes.
  CHECK_THAT(r.output, Contains("adaptive minus fixed: ") && Contains("final sizes equal: True"));

  const auto bad = comera::run_process({"bash", comera::source_dir() + "/scripts/compare_dense.sh", "--seeds", "x"},
                                       "compare_dense.sh", comera::ErrorOutput::Merge);
  CHECK(bad.status != 0);
  CHECK_THAT(bad.output, Contains("--seeds x"));
}
