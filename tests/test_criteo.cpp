// The Criteo reader on fixtures in the exact Kaggle format (empty fields, negatives, bad hex,
// short lines, bad labels; plain and .gz), the day split against the reference's figures, the
// shuffle buffer, click data through data.format criteo, the synthetic generator (deterministic
// per seed, readable, planted signal), and the exact AUC against hand-computed values.
#include "core/data/criteo.h"
#include "dataprep/synth_criteo.h"
#include "core/data/task_data.h"
#include "core/util/auc.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "core/util/gzip_lines.h"
#include "core/util/source_dir.h"
#include "tests/support/catch.h"
#include "tests/support/temp_dir.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace comera;
using Catch::Matchers::Contains;
using comera::testing::TempDir;

namespace {

std::string fixture(const std::string& name) {
  return comera::source_dir() + "/tests/fixtures/criteo/" + name;
}

CriteoFormat format_of(int64_t rows, int64_t last_rows = 7) {
  CriteoFormat f;
  f.table_sizes.assign(26, rows);
  f.table_sizes.back() = last_rows;
  return f;
}

std::vector<ClickLine> read_all(const std::string& path, const CriteoFormat& f, CriteoReadOptions o = {}) {
  CriteoReader reader(path, f, o);
  std::vector<ClickLine> lines;
  ClickLine line;
  while (reader.next(line)) lines.push_back(line);
  return lines;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("Criteo lines parse as the reference preprocesses them", "[criteo]") {
  const auto f = format_of(1000);
  const auto lines = read_all(fixture("good.txt"), f);
  REQUIRE(lines.size() == 3);
  const auto& a = lines[0];
  CHECK(a.label == 0);
  REQUIRE(a.dense.size() == 13);
  CHECK(a.dense[0] == Approx(std::log(2.0)));
  CHECK(a.dense[3] == 0);                        // "0"
  CHECK(a.dense[4] == Approx(std::log(1383.0)));
  CHECK(a.dense[11] == 0);                       // empty
  CHECK(a.dense[12] == Approx(std::log(3.0)));
  REQUIRE(a.ids.size() == 26);
  CHECK(a.ids[0] == 0x68fd1e64 % 1000);
  CHECK(a.ids[21] == 0);                         // empty categorical
  CHECK(a.ids[25] == 0x9727dd16 % 7);
  const auto& b = lines[1];
  CHECK(b.label == 1);
  CHECK(b.dense[1] == 0);  // -1 clamped
  for (const auto id : b.ids) CHECK(id == 0);
  const auto& c = lines[2];
  for (int64_t t = 0; t < 25; ++t) CHECK(c.ids[t] == t);
  CHECK(c.ids[25] == 4294967295ull % 7);
  // The same through zlib.
  const auto gz = read_all(fixture("good.txt.gz"), f);
  REQUIRE(gz.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(gz[i].ids == lines[i].ids);
    CHECK(gz[i].dense == lines[i].dense);
  }
}

TEST_CASE("malformed Criteo lines are errors with file and line, or skipped and counted", "[criteo]") {
  const auto f = format_of(1000);
  const auto path = fixture("malformed.txt");
  auto error_at = [&](int64_t begin) {
    CriteoReadOptions o;
    o.lines.begin = begin;
    try {
      read_all(path, f, o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_at(0), Contains("malformed.txt:2: field 20 is '0000zz05', not an 8-digit hexadecimal id"));
  CHECK_THAT(error_at(2), Contains("malformed.txt:3: 30 tab-separated fields, expected 40"));
  CHECK_THAT(error_at(3), Contains("malformed.txt:4: the label is '2'"));
  CHECK_THAT(error_at(4), Contains("malformed.txt:5: field 3 is '4x4', not an integer"));
  CriteoReadOptions skip;
  skip.skip_malformed = true;
  CriteoReader reader(path, f, skip);
  ClickLine line;
  int64_t n = 0;
  while (reader.next(line)) ++n;
  CHECK(n == 2);
  CHECK(reader.skipped() == 4);
  CHECK_THROWS_WITH(CriteoReader(fixture("absent.txt"), f), Contains("absent.txt: cannot open"));
  CHECK_THROWS_WITH(CriteoReader(path, CriteoFormat{}), Contains("no table sizes"));
}

TEST_CASE("a damaged gzip click log is an error naming the file and the damage", "[criteo]") {
  const auto f = format_of(1000);
  const TempDir dir;
  const std::string good = bytes_of(fixture("good.txt"));
  std::string many;  // 150 lines: the second member's deflate data is long enough to damage
  for (int i = 0; i < 50; ++i) many += good;
  write_gzip(dir.file("first.gz"), good);
  write_gzip(dir.file("second.gz"), many);
  const std::string first = bytes_of(dir.file("first.gz")), second = bytes_of(dir.file("second.gz"));
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir.file(name), std::ios::binary) << bytes;
    return dir.file(name);
  };
  REQUIRE(read_all(write("whole.gz", first + second), f).size() == 153);  // members read in turn
  std::string damaged = second;
  damaged[damaged.size() / 2] ^= 0x55;
  std::string bad_crc = second;
  bad_crc[bad_crc.size() - 6] ^= 0x01;  // the CRC-32 in the member's trailer
  for (const auto& [name, bytes] :
       std::vector<std::pair<std::string, std::string>>{{"later_member.gz", first + damaged},
                                                        {"truncated.gz", first + second.substr(0, second.size() - 20)},
                                                        {"crc.gz", first + bad_crc}}) {
    INFO(name);
    const auto path = write(name, bytes);
    CHECK_THROWS_WITH(read_all(path, f), Contains(name) && Contains("gzip stream is damaged"));
    CHECK_THROWS_WITH(count_lines(path), Contains(name) && Contains("damaged"));
  }
}

TEST_CASE("a NUL byte at the start of a line makes that line malformed, no other", "[criteo]") {
  const auto f = format_of(1000);
  const TempDir dir;
  std::string text = bytes_of(fixture("good.txt"));
  text.insert(text.find('\n') + 1, 1, '\0');  // line 2 starts with NUL
  std::ofstream(dir.file("nul.txt"), std::ios::binary) << text;
  CHECK_THROWS_WITH(read_all(dir.file("nul.txt"), f), Contains("nul.txt:2:"));
  CriteoReadOptions skip;
  skip.skip_malformed = true;
  CriteoReader reader(dir.file("nul.txt"), f, skip);
  ClickLine line;
  int64_t n = 0;
  while (reader.next(line)) ++n;
  CHECK(n == 2);
  CHECK(reader.skipped() == 1);
  CHECK(reader.lines_read() == 3);
}

TEST_CASE("the day split matches the reference's Kaggle figures", "[criteo]") {
  const auto s = criteo_day_split(45840617);
  CHECK(s.train.begin == 0);
  CHECK(s.train.end == 39291958);
  CHECK(s.test.end - s.test.begin == 3274330);
  CHECK(s.validation.end - s.validation.begin == 3274329);
  CHECK(s.validation.end == 45840617);
  const auto small = criteo_day_split(10);  // days of 2, 2, 2, 1, 1, 1, 1
  CHECK(small.train.end == 9);
  CHECK((small.test.begin == 9 && small.test.end == 10));
  CHECK(small.validation.begin == small.validation.end);
  CHECK_THROWS_WITH(criteo_day_split(5), Contains("a line per day"));
  // A range reads just those lines.
  CriteoReadOptions o;
  o.lines = {1, 2};
  const auto lines = read_all(fixture("good.txt"), format_of(1000), o);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].label == 1);
  CHECK(count_lines(fixture("good.txt")) == 3);
  CHECK(count_lines(fixture("good.txt.gz")) == 3);
}

TEST_CASE("the shuffle buffer reorders lines within it, the same per seed", "[criteo]") {
  TempDir dir;
  SynthCriteoOptions s;
  s.out_dir = dir.file("synth");
  s.train_lines = 300;
  s.eval_lines = 1;
  s.scale = 0.001;
  const auto summary = write_synth_criteo(s);
  CriteoFormat f;
  f.table_sizes = summary.table_sizes;
  auto order = [&](int64_t buffer, uint64_t seed) {
    CriteoReadOptions o;
    o.shuffle_buffer = buffer;
    o.seed = seed;
    std::vector<std::vector<int64_t>> ids;
    for (const auto& line : read_all(summary.train.file, f, o)) ids.push_back(line.ids);
    return ids;
  };
  const auto plain = order(0, 0), a = order(64, 1), b = order(64, 1), c = order(64, 2);
  REQUIRE(a.size() == 300);
  CHECK(a == b);
  CHECK(a != plain);
  CHECK(a != c);
  auto sorted = [](auto v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  CHECK(sorted(a) == sorted(plain));
}

TEST_CASE("synthetic Criteo is deterministic per seed, in the exact format, with a planted signal",
          "[criteo]") {
  TempDir dir;
  auto write = [&](const std::string& name, uint64_t seed, bool gzip) {
    SynthCriteoOptions s;
    s.out_dir = dir.file(name);
    s.train_lines = 4000;
    s.eval_lines = 1000;
    s.scale = 0.01;
    s.seed = seed;
    s.gzip = gzip;
    return write_synth_criteo(s);
  };
  const auto a = write("a", 7, false), b = write("b", 7, false), c = write("c", 8, false);
  CHECK(bytes_of(a.train.file) == bytes_of(b.train.file));
  CHECK(bytes_of(a.eval.file) == bytes_of(b.eval.file));
  CHECK(bytes_of(a.train.file) != bytes_of(c.train.file));
  CHECK(a.table_sizes == scaled_criteo_table_sizes(0.01));
  CHECK(a.table_sizes[2] == 101312);
  CHECK(a.table_sizes[8] == 3);  // small tables kept
  // Every line parses as Criteo; the share of positives is Criteo-like; the planted model's own
  // AUC is well above chance and agrees with the AUC of its labels recomputed here.
  CriteoFormat f;
  f.table_sizes = a.table_sizes;
  const auto lines = read_all(a.train.file, f);
  REQUIRE(lines.size() == 4000);
  int64_t positives = 0;
  for (const auto& l : lines) positives += l.label > 0.5f;
  CHECK(positives == a.train.positives);
  CHECK(positives > 400);
  CHECK(positives < 2000);
  CHECK(a.train.planted_auc > 0.65);
  CHECK(a.train.planted_auc < 0.95);
  const auto json = nlohmann::json::parse(bytes_of(dir.file("a/summary.json")));
  CHECK(json.at("synthetic") == true);
  CHECK(json.at("train").at("planted_auc") == a.train.planted_auc);
  // Leaving one label-bearing table out costs signal, never adds it; the 101,312-row table (2)
  // carries a large share; only the planted tables are listed.
  REQUIRE(a.train.planted_auc_without_table.size() == 5);
  for (const auto& [table, auc] : a.train.planted_auc_without_table) {
    INFO("table " << table);
    CHECK(auc > 0.5);
    CHECK(auc < a.train.planted_auc + 0.01);  // a weak term may gain by chance on 4,000 lines
    CHECK(json.at("train").at("planted_auc_without_table").at(std::to_string(table)) == auc);
  }
  CHECK(a.train.planted_auc - a.train.planted_auc_without_table.at(2) > 0.02);
  CHECK(a.train.planted_auc_without_table.count(3) == 0);
  // Zipf: id 0 of the largest table is the most frequent by far.
  int64_t zeros = 0;
  for (const auto& l : lines) zeros += l.ids[2] == 0;
  CHECK(zeros > 100);
  // .gz holds the same lines.
  const auto gz = write("gz", 7, true);
  CHECK(gz.train.file.substr(gz.train.file.size() - 3) == ".gz");
  CHECK(read_all(gz.train.file, f).size() == 4000);
  CHECK(gz.train.planted_auc == a.train.planted_auc);
}

TEST_CASE("data.format criteo loads click batches for the trainer", "[criteo]") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("logs"));
  std::filesystem::copy_file(fixture("good.txt"), dir.file("logs/train.txt"));
  std::filesystem::copy_file(fixture("malformed.txt"), dir.file("logs/eval.txt"));
  nlohmann::json j = {{"format", "criteo"}, {"dir", dir.file("logs")},
                      {"criteo", {{"table_sizes", format_of(1000).table_sizes}, {"skip_malformed", true}}}};
  const auto config = read_data_config(ConfigReader(j, "data"));
  const auto data = load_task_data(config);
  CHECK(data.train->size() == 3);
  CHECK(data.eval->size() == 2);
  REQUIRE(data.notes.size() == 1);
  CHECK_THAT(data.notes[0], Contains("4 malformed click lines skipped") && Contains("eval.txt:"));
  CHECK(data.train->unit() == "click lines");
  CHECK(data.info.table_sizes == format_of(1000).table_sizes);
  const auto batch = data.train->batch({2, 0});
  CHECK(batch.at("dense").sizes() == at::IntArrayRef({2, 13}));
  CHECK(batch.at("sparse")[0][24].item<int64_t>() == 24);
  CHECK(batch.at("sparse")[1][0].item<int64_t>() == 0x68fd1e64 % 1000);
  CHECK(batch.at("labels")[0].item<float>() == 0);
  j["criteo"]["skip_malformed"] = false;
  CHECK_THROWS_WITH(load_task_data(read_data_config(ConfigReader(j, "data"))), Contains("eval.txt:2:"));
  j["format"] = "text";
  CHECK_THROWS_WITH(read_data_config(ConfigReader(j, "data")), Contains("data.criteo"));
  j = {{"format", "criteo"}};
  CHECK_THROWS_WITH(load_task_data(read_data_config(ConfigReader(j, "data"))), Contains("data.dir"));
  // Logs written compressed (synth-criteo --gzip) under the names the preset reads plain: the
  // error says so and how to name them, not to write them again.
  std::filesystem::create_directories(dir.file("gz"));
  write_gzip(dir.file("gz/train.txt.gz"), bytes_of(fixture("good.txt")));
  write_gzip(dir.file("gz/eval.txt.gz"), bytes_of(fixture("good.txt")));
  j = {{"format", "criteo"}, {"dir", dir.file("gz")}, {"criteo", {{"table_sizes", format_of(1000).table_sizes}}}};
  CHECK_THROWS_WITH(load_task_data(read_data_config(ConfigReader(j, "data"))),
                    Contains("train.txt.gz is") && Contains("data.train") && !Contains("synth-criteo --out"));
  j["train"] = "train.txt.gz";
  j["eval"] = "eval.txt.gz";
  CHECK(load_task_data(read_data_config(ConfigReader(j, "data"))).train->size() == 3);
}

TEST_CASE("a relative data.dir missing here is read from comera's home, as the presets' data/ folders are",
          "[criteo]") {
  TempDir home;
  std::filesystem::create_directories(home.file("data/clicks"));
  std::filesystem::copy_file(fixture("good.txt"), home.file("data/clicks/train.txt"));
  std::filesystem::copy_file(fixture("good.txt"), home.file("data/clicks/eval.txt"));
  const nlohmann::json j = {{"format", "criteo"}, {"dir", "data/clicks"},
                            {"criteo", {{"table_sizes", format_of(1000).table_sizes}}}};
  const auto config = read_data_config(ConfigReader(j, "data"));
  REQUIRE_FALSE(std::filesystem::exists("data/clicks"));
  const char* before = std::getenv("COMERA_HOME");
  const std::string kept = before ? before : "";
  setenv("COMERA_HOME", home.file("").c_str(), 1);
  std::string error;
  TaskData data;
  try {
    data = load_task_data(config);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (before) setenv("COMERA_HOME", kept.c_str(), 1); else unsetenv("COMERA_HOME");
  REQUIRE(error.empty());
  CHECK(data.train->size() == 3);
  CHECK(data.train_file == home.file("data/clicks/train.txt"));
  // The config keeps the folder as written: its records and hashes do not depend on the machine.
  CHECK(config.to_json()["dir"] == "data/clicks");
}

TEST_CASE("exact AUC matches hand-computed values, ties counting half", "[criteo]") {
  auto auc = [](std::vector<double> s, std::vector<double> y) {
    return exact_auc(at::tensor(s, at::kDouble), at::tensor(y, at::kDouble));
  };
  // 4 pairs, 3 ordered right.
  CHECK(auc({0.1, 0.4, 0.35, 0.8}, {0, 0, 1, 1}) == Approx(0.75));
  // Positive 0.5 ties both negatives (2 x 0.5), positive 0.9 beats both: 3 / 4.
  CHECK(auc({0.5, 0.5, 0.5, 0.9}, {1, 0, 0, 1}) == Approx(0.75));
  CHECK(auc({0.3, 0.3, 0.3}, {1, 0, 1}) == Approx(0.5));
  CHECK(auc({0.9, 0.8, 0.1}, {0, 0, 1}) == 0.0);
  // 2 positives x 3 negatives: 0.6 beats 0.2 and 0.4 and ties 0.6; 0.1 beats none.
  CHECK(auc({0.2, 0.6, 0.4, 0.6, 0.1}, {0, 1, 0, 0, 1}) == Approx(2.5 / 6));
  CHECK(std::isnan(auc({0.1, 0.2}, {1, 1})));
  CHECK_THROWS_WITH(auc({0.1}, {1, 0}), Contains("1 scores but 2 targets"));
}
