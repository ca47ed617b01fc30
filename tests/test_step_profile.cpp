// `bench step --profile` as library code: the parts' FLOPs against hand-counted ones, and the
// parts' times consistent with the step (the times themselves are not judged).
#include "core/training/experiment.h"
#include "core/util/config_reader.h"
#include "core/util/source_dir.h"
#include "search/bench/step_benchmark.h"
#include "tests/support/catch.h"

#include <nlohmann/json.hpp>

using namespace comera;

namespace {

const StepPartProfile& part(const StepProfile& p, const std::string& name) {
  for (const auto& row : p.parts)
    if (row.part == name) return row;
  FAIL("no part " << name);
  return p.parts.front();
}

}  // namespace

TEST_CASE("step profile: FLOPs per part as counted by hand, times adding up to the step", "[bench]") {
  const auto file = comera::source_dir() + "/experiments/small_two_encoder.json";
  auto e = parse_experiment(read_json_file(file), file);
  const int64_t B = 2, S = 16, d = 64, ffn = 256, layers = 2, classes = 26;
  StepBenchmarkOptions o;
  o.batch = B;
  o.length = S;
  o.warmup = 1;
  o.repeats = 2;
  o.profile = true;

  e.model = e.model.dense();
  const auto dense = benchmark_step(e.model, e.training, o);
  REQUIRE(dense.profile);
  const auto& p = *dense.profile;
  // Per encoder Q, K, V, O and the FFN on every token; the pooler and classifier on one row per
  // sequence; forward once and backward twice, 2 FLOPs a multiply-add.
  const double per_token = layers * (4 * d * d + 2 * d * ffn);
  const double per_sequence = d * d + d * classes;
  CHECK(part(p, "linear layers").flops == Approx(6.0 * (B * S * per_token + B * per_sequence)));
  // Scores and context forward, their four gradients backward: 6 products of B·S²·d multiply-adds.
  CHECK(part(p, "attention (products, softmax, bias, dropout)").flops == Approx(12.0 * layers * B * S * S * d));
  CHECK(p.gemm_gflops > 0);
  double parts_ms = 0;
  for (const auto& row : p.parts) {
    INFO(row.part);
    CHECK(row.ms >= 0);
    if (row.split) CHECK(row.ms == Approx(row.forward_ms + row.backward_ms));
    parts_ms += row.ms;
  }
  CHECK(parts_ms == Approx(p.step_ms).epsilon(1e-6));
  for (const char* name : {"linear layers", "attention (products, softmax, bias, dropout)",
                           "residual adds, dropout, layer norms", "GELU"}) {
    INFO(name);
    CHECK(part(p, name).forward_ms > 0);
    CHECK(part(p, name).backward_ms > 0);
  }
  CHECK(part(p, "optimiser step").ms > 0);
  CHECK(part(p, "embedding lookup").forward_ms > 0);
  // The rest, named: disjoint from the parts, so within the rest's time; largest first; and the
  // loss, which the model code computes outside every part, among them.
  double named_ms = 0;
  bool loss = false;
  for (size_t i = 0; i < p.rest_by_name.size(); ++i) {
    const auto& [name, ms] = p.rest_by_name[i];
    INFO(name);
    CHECK(ms >= 0);
    if (i > 0) CHECK(ms <= p.rest_by_name[i - 1].second);
    named_ms += ms;
    loss = loss || name == "aten::cross_entropy_loss";
  }
  CHECK(loss);
  CHECK(named_ms <= part(p, "element-wise and other").ms * (1 + 1e-6) + 1e-9);
  const auto j = dense.to_json();
  CHECK(j["profile"]["parts"].size() == p.parts.size());
  CHECK(j["profile"]["parts"][0]["gflops"].get<double>() > 0);
  CHECK(j["profile"]["rest_by_name"].size() == p.rest_by_name.size());

  // The quick preset's layers are TT matrices: x W as dense, plus forming each W, by hand
  // (core k's GEMM: the rows and columns so far x r_{k-1} x n_k m_k r_k): attention and pooler
  // 16·6·96 + 256·6·16, ffn_in 16·6·160 + 512·5·32, ffn_out 32·5·192 + 1024·6·16.
  e = parse_experiment(read_json_file(file), file);
  const auto ttm = benchmark_step(e.model, e.training, o);
  REQUIRE(ttm.profile);
  const double forming = layers * (4 * 33792 + 97280 + 129024) + 33792;
  CHECK(part(*ttm.profile, "linear layers").flops == Approx(part(p, "linear layers").flops + 6.0 * forming));

  // The quickstart's are the paper's TT layers, whose merged path saves FLOPs.
  const auto tt_file = comera::source_dir() + "/experiments/sweeps/quickstart_base.json";
  e = parse_experiment(read_json_file(tt_file), tt_file);
  const auto tt = benchmark_step(e.model, e.training, o);
  REQUIRE(tt.profile);
  CHECK(part(*tt.profile, "linear layers").flops > 0);
  CHECK(part(*tt.profile, "linear layers").flops < part(p, "linear layers").flops);
  CHECK(part(*tt.profile, "attention (products, softmax, bias, dropout)").flops == Approx(part(p, "attention (products, softmax, bias, dropout)").flops));
  CHECK(part(*tt.profile, "linear layers").backward_ms > 0);
  CHECK(part(*tt.profile, "embedding lookup").backward_ms > 0);
  CHECK(part(*tt.profile, "size terms").forward_ms > 0);
}
