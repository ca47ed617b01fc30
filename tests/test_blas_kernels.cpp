// OpenBLAS's AVX-512 kernels by default: the decision, what a comera process runs and reports,
// a user's OPENBLAS_CORETYPE winning, and float32 GEMMs under the kernels in force against
// float64.
#include "core/util/blas_kernels.h"
#include "core/util/source_dir.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <vector>

using Catch::Matchers::Contains;

namespace {

// The test binary switches kernels like the CLI (its main is Catch2's), so the whole suite
// runs on the kernels users get.
const bool kSwitched = (comera::use_best_blas_kernels(), true);

bool avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

}  // namespace

TEST_CASE("better_openblas_core: SkylakeX where AVX-512 is present and OpenBLAS chose less", "[blas]") {
  CHECK(kSwitched);
  CHECK(comera::better_openblas_core(true, "Haswell") == "SkylakeX");
  CHECK(comera::better_openblas_core(true, "Zen") == "SkylakeX");
  CHECK(comera::better_openblas_core(true, "SkylakeX").empty());
  CHECK(comera::better_openblas_core(true, "Cooperlake").empty());  // SkylakeX's kernels and more
  CHECK(comera::better_openblas_core(false, "Haswell").empty());
  CHECK(comera::better_openblas_core(true, "").empty());  // another BLAS: nothing to set
}

TEST_CASE("A comera process runs AVX-512 kernels where the CPU has them, unless the user chose",
          "[blas][cli][openblas]") {
  const std::string step = " bench step --config " + comera::source_dir() +
                           "/experiments/small_two_encoder.json --batch 1 --seq 8 --warmup 0 "
                           "--repeats 1 --json 2>/dev/null";
  const std::string clean = "env -u OPENBLAS_CORETYPE -u COMERA_OPENBLAS_CORETYPE ";
  auto r = comera::run_process({"/bin/sh", "-c", clean + comera::testing::cli_path() + step},
                                        "comera", comera::ErrorOutput::Merge);
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto blas = nlohmann::json::parse(r.output)["blas"].get<std::string>();
  REQUIRE(blas != "not OpenBLAS");
  if (avx512())
    CHECK((blas == "OpenBLAS SkylakeX (chosen by comera)" || blas == "OpenBLAS SkylakeX (chosen by OpenBLAS)" ||
           blas == "OpenBLAS Cooperlake (chosen by OpenBLAS)" ||
           blas == "OpenBLAS SapphireRapids (chosen by OpenBLAS)"));
  else
    CHECK_THAT(blas, Contains("(chosen by OpenBLAS)"));

  r = comera::run_process(
      {"/bin/sh", "-c", clean + "OPENBLAS_CORETYPE=Haswell " + comera::testing::cli_path() + step},
      "comera", comera::ErrorOutput::Merge);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(nlohmann::json::parse(r.output)["blas"] == "OpenBLAS Haswell (chosen by user)");

  // Turned off: OpenBLAS's own choice, whatever it is.
  r = comera::run_process(
      {"/bin/sh", "-c", clean + "COMERA_BLAS_SWITCH=off " + comera::testing::cli_path() + step},
      "comera", comera::ErrorOutput::Merge);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(nlohmann::json::parse(r.output)["blas"].get<std::string>(), Contains("(chosen by OpenBLAS)"));
}

TEST_CASE("float32 GEMMs under the kernels in force match float64", "[blas]") {
  INFO(comera::blas_kernels().describe());
  at::manual_seed(3);
  // Odd sizes exercise the kernels' edge tiles; transposed operands their other copy routines.
  for (const auto& [m, k, n] : std::vector<std::array<int64_t, 3>>{{1, 7, 5}, {37, 129, 61}, {300, 257, 190}}) {
    const auto a = at::randn({m, k}, at::kDouble), b = at::randn({k, n}, at::kDouble);
    const auto want = at::mm(a, b);
    const auto tolerance = 1e-5 * std::sqrt(static_cast<double>(k));
    for (const bool transposed : {false, true}) {
      const auto af = transposed ? a.t().contiguous().to(at::kFloat).t() : a.to(at::kFloat);
      const auto bf = transposed ? b.t().contiguous().to(at::kFloat).t() : b.to(at::kFloat);
      const auto got = at::mm(af, bf).to(at::kDouble);
      CHECK((got - want).abs().max().item<double>() < tolerance * 4);
    }
    const auto batched = at::bmm(a.to(at::kFloat).expand({3, m, k}), b.to(at::kFloat).expand({3, k, n}));
    CHECK((batched.to(at::kDouble) - want).abs().max().item<double>() < tolerance * 4);
  }
}
