// The bench commands as a user runs them, at the smallest sizes their flags allow: what they
// print beside their figures, and what they refuse before any work. Timings are not judged.
#include "core/util/blas_kernels.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tiny_experiment.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

using Catch::Matchers::Contains;

namespace {

// The CPU's name as /proc/cpuinfo gives it, read here apart from the code under test.
std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown cpu";
}

// "<cpu>, OpenBLAS <kernels>" where OpenBLAS runs the GEMMs.
std::string cpu_and_blas() {
  const auto core = comera::blas_kernels().core;
  return cpu_name() + (core.empty() ? "" : ", OpenBLAS " + core);
}

// The tiny experiment as `name` in `dir`.
std::string tiny_config(const comera::testing::TempDir& dir, const std::string& name = "tiny.json") {
  return comera::testing::write_tiny_experiment(dir.file(name));
}

}  // namespace

TEST_CASE("every benchmark names the CPU and its BLAS kernels beside its figures, in text and JSON",
          "[bench][cli]") {
  const comera::testing::TempDir dir;
  const auto config = tiny_config(dir);
  const auto cpu = cpu_and_blas();
  const std::string step = " --config " + config + " --seq 4 --warmup 0 --repeats 1 --threads 1";
  for (const std::string& command : std::vector<std::string>{
           "bench layer --tokens 2 --repeats 1 --warmup 0", "bench step --batch 1" + step,
        "bench step --compare --batches 1" + step, "bench methods --methods tt --batches 1" + step,
        "bench paths --in-modes 2,2 --out-modes 2,2 --ranks 2 --tokens 2 --budget-ms 1 --min-repeats 1 "
        "--max-repeats 1 --no-verify",
        "bench ttm --ids 8 --repeats 1 --warmup 0",
        "bench embedding-bag --batch 4 --scale 0.001 --min-rows 2000 --rank 2 --repeats 1 --warmup 0 --no-dense",
        "bench sampler --budget 2 --seeds 1 --problems zdt1 --methods random --checkpoints 2"}) {
    INFO(command);
    const auto text = comera::testing::run_cli(command + " 2>/dev/null");
    INFO(text.output);
    REQUIRE(text.status == 0);
    CHECK_THAT(text.output, Contains(cpu));
    const auto json = comera::testing::run_cli(command + " --json 2>/dev/null");
    REQUIRE(json.status == 0);
    CHECK_THAT(json.output, Contains("\"" + cpu + "\""));
  }
  // A step's record names its threads beside the CPU.
  const auto j = nlohmann::json::parse(comera::testing::run_cli("bench step --json --batch 1" + step + " 2>/dev/null").output);
  CHECK(j.at("device_description") == cpu);
  CHECK(j.at("threads") == 1);
}

TEST_CASE("bad benchmark flags are refused before any work, naming the flag and the fix", "[bench][cli]") {
  const comera::testing::TempDir dir;
  const auto config = tiny_config(dir);
  const std::string step = " --config " + config + " --seq 4 --warmup 0 --repeats 1 --threads 1";
  const auto bad = dir.file("bad.json");
  std::ofstream(bad) << R"({"model": {"heads": "two"}})";
  const auto folder_file = dir.file("a_file");
  std::ofstream(folder_file) << "not a folder";
  // Each command, and what its refusal says. Nothing may have started: no banner, no child's
  // progress ("batch 1: ..."), no table.
  const std::vector<std::pair<std::string, std::string>> cases{
      {"bench step --warmup -1 --batch 1 --config " + config, "--warmup -1: give 0 or more"},
      {"bench step --compare --warmup -1 --batches 1 --config " + config, "--warmup -1: give 0 or more"},
      {"bench ttm --warmup -1 --ids 8 --repeats 1", "--warmup -1: give 0 or more"},
      {"bench embedding-bag --warmup -1 --batch 4 --scale 0.001 --repeats 1 --no-dense", "--warmup -1: give 0 or more"},
      {"bench methods --warmup -1 --methods tt --batches 1 --config " + config, "--warmup -1: give 0 or more"},
      {"bench methods --methods tt --batches 1 --method-settings nope" + step, "--method-settings: not JSON"},
      {"bench methods --methods tt --batches 1 --seq 4 --config " + bad, "bad.json"},
      {"bench data-parallel --seq 4 --config " + bad, "bad.json"},
      {"bench data-parallel --warmup -1 --config " + config, "--warmup -1: give 0 or more"},
      {"bench data-parallel --repeats 0 --config " + config, "--repeats 0: give at least 1"},
      {"bench data-parallel --batch 1 --config " + config, "--batch 1: give at least 2"},
      {"bench data-parallel --threads 1 --config " + config, "leave out --threads"},
      {"bench sampler --problems zdt9 --budget 2 --seeds 1", "--problems: test problem 'zdt9' is unknown"},
      {"bench sampler --methods bogus --budget 2 --seeds 1", "--methods: unknown sampler 'bogus'"},
      {"bench sampler --checkpoints 99 --budget 2 --seeds 1", "--checkpoints: 99 is outside 1..2"},
      {"bench report --folder " + folder_file, "--folder " + folder_file + " is a file, not a folder"},
      {"bench layer --kernels false --tokens 2 --repeats 1", "give --kernels=false"},
      {"bench step --dense --method galore --batch 1" + step, "--dense: method galore is a build of its own"},
      {"bench step --compare --batches 1 --batch 99" + step, "--batch does not go with --compare"},
      {"bench step --compare --batches 1 --method galore" + step, "--method does not go with --compare"},
      {"bench step --compare --batches 1 --nproc 2" + step, "--nproc does not go with --compare"},
      {"bench step --compare --batches 1 --dense" + step, "--dense does not go with --compare"},
      {"bench step --batches 1,2 --batch 1" + step, "--batches goes with --compare"},
      {"bench step --nproc 2 --batch 1" + step, "--batch 1 is below --nproc 2"},
      {"tune --config " + config + " --tokens 8 --db " + dir.file("t.db"), "--tokens does not go with --config"},
      {"bench paths --layers attention --in-modes 2,2 --out-modes 2,2 --ranks 2 --tokens 2",
       "--layers does not go with --in-modes"},
  };
  for (const auto& [command, refusal] : cases) {
    INFO(command);
    const auto r = comera::testing::run_cli(command);
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(refusal));
    // Refused before any work: the error is the first thing said.
    CHECK_THAT(r.output.substr(0, r.output.find('\n')), Contains("error:"));
    CHECK_THAT(r.output, !Contains("filesystem error"));
  }
  CHECK_FALSE(std::filesystem::exists(dir.file("t.db")));
}

TEST_CASE("a relative --config not found here is read from COMERA_HOME, as comera --help says", "[bench][cli]") {
  const comera::testing::TempDir home, elsewhere;
  std::filesystem::create_directories(home.file("experiments"));
  tiny_config(home, "experiments/tiny.json");
  const std::string in_elsewhere = "cd " + elsewhere.file("") + " && COMERA_HOME=" + home.file("") + " ";
  const std::string flags = " --config experiments/tiny.json --seq 4 --warmup 0 --repeats 1 --threads 1 --json";
  for (const std::string command : {"bench step --batch 1", "bench methods --methods tt --batches 1"}) {
    INFO(command);
    const auto r = comera::run_process(
        {"/bin/sh", "-c", in_elsewhere + comera::testing::cli_path() + " " + command + flags + " 2>&1"}, "comera");
    INFO(r.output);
    CHECK(r.status == 0);
  }
  // Found nowhere: the flag, both places looked in, and how to choose another.
  const auto r = comera::run_process(
      {"/bin/sh", "-c", in_elsewhere + comera::testing::cli_path() + " bench step --config experiments/none.json 2>&1"},
      "comera");
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Contains("--config experiments/none.json: no such file here or in " + home.file("")) &&
                           Contains("COMERA_HOME"));
}

TEST_CASE("bench embedding-bag --help counts both dense copies --no-dense skips", "[bench][cli]") {
  const auto r = comera::testing::run_cli("bench embedding-bag --help");
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Contains("two copies of the tables") && Contains("2.16 GB each"));
}
