#include "dataprep/synth_criteo.h"

#include "core/data/criteo.h"
#include "core/util/auc.h"
#include "core/util/error.h"
#include "core/util/format.h"
#include "core/util/output_file.h"
#include "core/util/random.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iterator>

namespace comera {

namespace {

constexpr int64_t kDense = 13;
// The planted model reads these integer features (0-based) and tables.
constexpr int64_t kPlantedDense[] = {0, 2, 5};
constexpr double kDenseWeight[] = {0.5, -0.4, 0.3};
constexpr int64_t kPlantedTables[] = {0, 2, 5, 8, 13};
constexpr double kIdWeightSpread = 0.9;
constexpr double kBias = -1.3;  // 38-46% of the lines positive (docs/dlrm.md), Criteo about 25%

// A fixed pseudo-random standard normal per (seed, table, id): the planted per-id weights,
// without storing a table of them.
double id_weight(uint64_t seed, int64_t table, int64_t id) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(table) * 0xD1B54A32D192ED03ull +
               static_cast<uint64_t>(id) * 0xAEF17502108EF2D9ull;
  auto mix = [&z]() {
    z += 0x9E3779B97F4A7C15ull;
    uint64_t x = z;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return static_cast<double>((x ^ (x >> 31)) >> 11) * 0x1.0p-53;
  };
  const double u = 1.0 - mix();
  return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * mix());
}

// Writes through zlib (gzip or plain).
class LineWriter {
 public:
  LineWriter(const std::string& path, bool gzip) : file_(gzopen(path.c_str(), gzip ? "wb6" : "wbT")) {
    if (!file_) throw Error(path + ": cannot write the synthetic click log");
  }
  ~LineWriter() {
    if (file_) gzclose(file_);
  }
  void write(const std::string& line) {
    if (gzwrite(file_, line.data(), static_cast<unsigned>(line.size())) != static_cast<int>(line.size()))
      throw Error("writing the synthetic click log failed (disk full?)");
  }
  void close() {
    if (gzclose(file_) != Z_OK) throw Error("closing the synthetic click log failed (disk full?)");
    file_ = nullptr;
  }

 private:
  gzFile file_;
};

SynthCriteoSplit write_split(const std::string& path, int64_t lines, const std::vector<int64_t>& sizes,
                             const SynthCriteoOptions& o, uint64_t stream, int64_t done, int64_t total) {
  SynthCriteoSplit split;
  split.file = path;
  split.lines = lines;
  const OutputFile out(path, "the synthetic " + std::filesystem::path(path).filename().string(), {});
  std::vector<float> probabilities(static_cast<size_t>(lines));
  std::vector<uint8_t> labels(static_cast<size_t>(lines));
  // Per planted table present, each line's logit without that table's term.
  std::vector<int64_t> planted;
  for (const int64_t t : kPlantedTables)
    if (static_cast<size_t>(t) < sizes.size()) planted.push_back(t);
  std::vector<std::vector<float>> logits_without(planted.size(), std::vector<float>(static_cast<size_t>(lines)));
  std::vector<double> terms(planted.size());
  out.write([&](const std::string& temp) {
    LineWriter writer(temp, o.gzip);
    Rng rng(o.seed * 0x2545F4914F6CDD1Dull + stream);
    std::string line;
    char field[32];
    std::vector<int64_t> dense(kDense), ids(sizes.size());
    for (int64_t n = 0; n < lines; ++n) {
      // Integer features: log-normal counts, some missing, feature 1 sometimes negative (as I2).
      std::vector<bool> dense_missing(kDense);
      for (int64_t j = 0; j < kDense; ++j) {
        dense_missing[j] = rng.uniform() < 0.05 + 0.03 * static_cast<double>(j % 5);
        dense[j] = static_cast<int64_t>(std::exp(1.0 + 0.2 * static_cast<double>(j) + 1.3 * rng.normal())) - 1;
        if (j == 1 && rng.uniform() < 0.05) dense[j] = -1 - static_cast<int64_t>(rng.below(3));
      }
      std::vector<bool> id_missing(sizes.size());
      for (size_t t = 0; t < sizes.size(); ++t) {
        id_missing[t] = rng.uniform() < (t % 7 == 6 ? 0.3 : 0.02);
        ids[t] = id_missing[t] ? 0 : rng.zipf(sizes[t], o.zipf);
      }
      double logit = kBias;
      for (size_t k = 0; k < std::size(kPlantedDense); ++k) {
        const int64_t j = kPlantedDense[k];
        const double x = dense_missing[j] ? 0.0 : std::log1p(static_cast<double>(std::max<int64_t>(0, dense[j])));
        logit += kDenseWeight[k] * (x - 2.0);
      }
      for (size_t k = 0; k < planted.size(); ++k) {
        terms[k] = kIdWeightSpread * id_weight(o.seed, planted[k], ids[planted[k]]);
        logit += terms[k];
      }
      for (size_t k = 0; k < planted.size(); ++k)
        logits_without[k][static_cast<size_t>(n)] = static_cast<float>(logit - terms[k]);
      const double p = 1 / (1 + std::exp(-logit));
      const bool label = rng.uniform() < p;
      probabilities[static_cast<size_t>(n)] = static_cast<float>(p);
      labels[static_cast<size_t>(n)] = label;
      split.positives += label;
      line.assign(label ? "1" : "0");
      for (int64_t j = 0; j < kDense; ++j) {
        line += '\t';
        if (!dense_missing[j]) line += std::to_string(dense[j]);
      }
      for (size_t t = 0; t < sizes.size(); ++t) {
        line += '\t';
        if (id_missing[t]) continue;
        std::snprintf(field, sizeof field, "%08llx", static_cast<unsigned long long>(ids[t]));
        line += field;
      }
      line += '\n';
      writer.write(line);
      if (o.progress && (done + n + 1) % 100000 == 0) o.progress(done + n + 1, total);
    }
    writer.close();
  });
  const auto label_tensor = at::from_blob(labels.data(), {lines}, at::kByte);
  split.planted_auc = exact_auc(at::from_blob(probabilities.data(), {lines}, at::kFloat), label_tensor);
  // The logit is monotone in the probability: its AUC is the probability's.
  for (size_t k = 0; k < planted.size(); ++k)
    split.planted_auc_without_table[planted[k]] =
        exact_auc(at::from_blob(logits_without[k].data(), {lines}, at::kFloat), label_tensor);
  return split;
}

}  // namespace

std::vector<int64_t> scaled_criteo_table_sizes(double scale) {
  if (!(scale > 0) || scale > 1)
    throw Error("--scale " + number_text(scale) + ": the table sizes' scale must be in (0, 1]");
  std::vector<int64_t> sizes;
  for (const int64_t k : criteo_kaggle_table_sizes())
    sizes.push_back(std::min(k, std::max<int64_t>(4, std::llround(static_cast<double>(k) * scale))));
  return sizes;
}

nlohmann::json SynthCriteoSummary::to_json() const {
  auto split = [](const SynthCriteoSplit& s) {
    nlohmann::json without = nlohmann::json::object();
    for (const auto& [table, auc] : s.planted_auc_without_table) without[std::to_string(table)] = auc;
    return nlohmann::json{{"file", s.file}, {"lines", s.lines}, {"positives", s.positives},
                          {"planted_auc", s.planted_auc}, {"planted_auc_without_table", without}};
  };
  return {{"synthetic", true},
          {"description", "synthetic click logs in the Criteo format; labels from a planted logistic model"},
          {"table_sizes", table_sizes}, {"scale", options.scale}, {"zipf", options.zipf},
          {"seed", options.seed}, {"train", split(train)}, {"eval", split(eval)}};
}

SynthCriteoSummary write_synth_criteo(const SynthCriteoOptions& o) {
  if (o.out_dir.empty()) throw Error("synth-criteo: name the output folder (--out)");
  if (o.train_lines < 1 || o.eval_lines < 1) throw Error("synth-criteo: --train-lines and --eval-lines must be >= 1");
  require_zipf_exponent(o.zipf, "synth-criteo: --zipf");
  SynthCriteoSummary s;
  s.options = o;
  s.table_sizes = scaled_criteo_table_sizes(o.scale);
  const std::filesystem::path dir = o.out_dir;
  const std::string ext = o.gzip ? ".txt.gz" : ".txt";
  const int64_t total = o.train_lines + o.eval_lines;
  s.train = write_split((dir / ("train" + ext)).string(), o.train_lines, s.table_sizes, o, 1, 0, total);
  s.eval = write_split((dir / ("eval" + ext)).string(), o.eval_lines, s.table_sizes, o, 2, o.train_lines, total);
  OutputFile((dir / "summary.json").string(), "the synthetic summary.json", {})
      .write_text([&](std::ostream& out) { out << s.to_json().dump(2) << "\n"; });
  return s;
}

}  // namespace comera
