// The repository's published figures (experiments/paper/published_figures.json): read from the
// source tree, every figure with its source and certainty; and the errors for a missing or
// malformed file.
#include "core/util/error.h"
#include "search/sweep/published_figures.h"
#include "tests/support/catch.h"
#include "tests/support/temp_dir.h"

#include <fstream>

using namespace comera;
using Catch::Matchers::Contains;
using comera::testing::TempDir;
using nlohmann::json;

TEST_CASE("the published figures come from the repository, each with its source", "[figures]") {
  const std::string file = sweep::default_figures_file();
  CHECK_THAT(file, Contains("experiments/paper/published_figures.json"));
  const json figures = sweep::load_figures_file(file);
  sweep::PublishedFigures published(file);
  CHECK(published.number("/mnli_six_encoder/dense_model_mb", "t") == 256);
  CHECK(published.number("/mnli_six_encoder/late_stage_target_ratio_0.2/compression_x", "t") == 80);
  CHECK(published.number("/codebert_large/compression_x", "t") == Approx(4.23));
  CHECK(sweep::figure_text(published.resolve("/mnli_six_encoder/speedup_per_epoch_vs_dense_x", "t")) == "2-3");
  CHECK(sweep::figure_text(published.resolve("/mnli_six_encoder/early_stage_compression_x", "t")) ==
        "43 (uncertain)");
  CHECK(sweep::figure_text(published.resolve(
            "/mnli_six_encoder/late_stage_target_ratio_0.2/tensorized_layers_mb", "t")) == "0.7 (derived)");
  const json dense = published.resolve("/mnli_six_encoder/dense_model_mb", "t");
  CHECK_THAT(dense["source"].get<std::string>(), Contains("MNLI results table"));
  CHECK(figures["certainty"].contains(dense["certainty"].get<std::string>()));
  CHECK_THROWS_WITH(published.number("/mnli_six_encoder/accuracy", "spec.x"),
                    Contains("spec.x") && Contains("is a range"));
  CHECK_THROWS_WITH(published.resolve("/mnli_six_encoder/setting/hardware", "spec.y"),
                    Contains("spec.y") && Contains("not a figure"));
}

TEST_CASE("a missing or malformed figures file is refused, naming the file and figure", "[figures]") {
  TempDir dir;
  CHECK_THROWS_WITH(sweep::load_figures_file(dir.file("none.json")),
                    Contains("cannot open") && Contains("none.json"));
  CHECK_THROWS_WITH(sweep::PublishedFigures(dir.file("none.json")).number("/a/b", "spec.z"),
                    Contains("none.json"));

  auto refused = [&](const json& content) {
    std::ofstream(dir.file("bad.json")) << content.dump();
    try {
      sweep::load_figures_file(dir.file("bad.json"));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const json legend = {{"stated", "in the abstract"}};
  const json good = {{"value", 2}, {"source", "abstract"}, {"certainty", "stated"}};
  CHECK(refused({{"certainty", legend}, {"a", {{"b", good}}}}) == "accepted");
  CHECK_THAT(refused({{"a", {{"b", good}}}}), Contains("bad.json") && Contains("\"certainty\" object"));
  json figure = good;
  figure.erase("source");
  CHECK_THAT(refused({{"certainty", legend}, {"a", {{"b", figure}}}}),
             Contains("bad.json: /a/b") && Contains("source"));
  figure = good;
  figure["certainty"] = "guessed";
  CHECK_THAT(refused({{"certainty", legend}, {"a", {{"b", figure}}}}),
             Contains("/a/b") && Contains("one of stated") && Contains("guessed"));
  figure = good;
  figure["value"] = "two";
  CHECK_THAT(refused({{"certainty", legend}, {"a", figure}}), Contains("/a") && Contains("number or a"));
  figure = good;
  figure["uncertain"] = true;
  CHECK_THAT(refused({{"certainty", legend}, {"a", figure}}), Contains("unknown key \"uncertain\""));
  std::ofstream(dir.file("bad.json")) << "{\"certainty\": ";
  CHECK_THROWS_WITH(sweep::load_figures_file(dir.file("bad.json")), Contains("invalid JSON"));
}
