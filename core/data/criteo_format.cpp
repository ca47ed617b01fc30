// data.format "criteo": Criteo's click logs (criteo.h), in memory or streamed from their files
// (click_stream.h); data.criteo holds their settings.
#include "core/data/click_stream.h"
#include "core/data/criteo.h"
#include "core/data/data_format.h"
#include "core/data/format_support.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "core/util/home_dir.h"
#include "core/util/gzip_lines.h"

#include <nlohmann/json.hpp>

#include <filesystem>

namespace comera {

namespace {

class ClickLogFormat : public DataFormat {
 public:
  std::string name() const override { return "criteo"; }
  std::string default_train() const override { return "train.txt"; }
  std::string default_eval() const override { return "eval.txt"; }
  std::vector<std::string> keys() const override { return {"criteo"}; }

  // table_sizes: the ids' tables (default the Kaggle sizes). split "files": train and eval are
  // separate files; "days": the reference's day split of the one file `train` (six days train,
  // the seventh halved), eval its test or validation half. skip_malformed: count and skip
  // malformed lines instead of failing. stream: read batches straight from the files each epoch
  // (memory: the shuffle buffer), training shuffling within shuffle_buffer lines.
  nlohmann::json read(const ConfigReader& r, const DataConfig&) const override {
    nlohmann::json c = {{"table_sizes", criteo_kaggle_table_sizes()}, {"split", "files"}, {"eval_part", "test"},
                        {"skip_malformed", false}, {"stream", false}};
    if (r.has("criteo")) {
      const auto k = r.object("criteo");
      if (k.has("table_sizes")) c["table_sizes"] = k.integers("table_sizes");
      c["split"] = k.choice("split", "files", {"files", "days"});
      c["eval_part"] = k.choice("eval_part", "test", {"test", "validation"});
      c["skip_malformed"] = k.boolean("skip_malformed", false);
      c["stream"] = k.boolean("stream", false);
      const auto buffer = k.integer("shuffle_buffer", 100000, 1);
      if (k.has("shuffle_buffer") && !c["stream"].get<bool>())
        throw Error(k.key_path("shuffle_buffer") + ": only read when streaming (set data.criteo.stream "
                    "to true, or remove it: in memory the whole training set is shuffled)");
      if (c["stream"].get<bool>()) c["shuffle_buffer"] = buffer;
      k.finish();
    }
    return {{"criteo", c}};
  }

  void require_files(const DataConfig& config) const override {
    if (config.dir.empty())
      throw Error("data.dir: click logs have no default folder (point it at the Criteo files, or "
                  "write synthetic ones with `comera data synth-criteo`)");
    const auto fix = "check data.dir / --data and the data.train / data.eval names; for synthetic click "
                     "logs run `comera data synth-criteo --out " + config.dir + "`";
    const auto [train_file, eval_file] = files(config);
    require_file(train_file, "data.train", fix);
    require_file(eval_file, "data.eval", fix);
  }

  std::string folder(const DataConfig& config) const override { return home_path(config.dir); }

  TaskData load(const DataConfig& config) const override {
    require_files(config);
    const auto& c = config.settings.at("criteo");
    CriteoFormat format;
    format.table_sizes = c.at("table_sizes").get<std::vector<int64_t>>();
    const bool days = c.at("split") == "days";
    const auto [train_file, eval_file] = files(config);
    CriteoReadOptions train_read, eval_read;
    train_read.skip_malformed = eval_read.skip_malformed = c.at("skip_malformed").get<bool>();
    if (days) {
      const auto split = criteo_day_split(count_lines(train_file));
      train_read.lines = split.train;
      eval_read.lines = c.at("eval_part") == "test" ? split.test : split.validation;
    }
    TaskData data;
    SkippedLines skipped_train, skipped_eval;
    if (c.at("stream").get<bool>()) {
      // Read afresh every epoch; the examples counted give the epochs' steps. Lines that may be
      // skipped are found by reading the range through once, so no epoch is shorter than said.
      const int64_t buffer = c.at("shuffle_buffer");
      auto examples = [&](const std::string& file, const CriteoReadOptions& read, SkippedLines& skipped) {
        if (read.skip_malformed) return count_click_lines(file, format, read, &skipped);
        return read.lines.end >= 0 ? read.lines.end - read.lines.begin : count_lines(file) - read.lines.begin;
      };
      data.train = std::make_shared<ClickStreamDataset>(train_file, format, train_read,
                                                        examples(train_file, train_read, skipped_train), buffer,
                                                        config.train_limit);
      data.eval = std::make_shared<ClickStreamDataset>(eval_file, format, eval_read,
                                                       examples(eval_file, eval_read, skipped_eval), buffer,
                                                       config.eval_limit);
    } else {
      data.train = load_click_dataset(train_file, format, train_read, config.train_limit, &skipped_train);
      data.eval = load_click_dataset(eval_file, format, eval_read, config.eval_limit, &skipped_eval);
    }
    for (const auto* s : {&skipped_train, &skipped_eval})
      if (s->count > 0)
        data.notes.push_back(std::to_string(s->count) + " malformed click lines skipped (the first: " + s->first + ")");
    data.info.dense_features = format.dense_features;
    data.info.table_sizes = format.table_sizes;
    data.info.classes = 2;
    data.train_file = train_file;
    data.eval_file = eval_file;
    data.synthetic = is_synthetic(home_path(config.dir));
    return data;
  }

 private:
  // The training and evaluation files (one and the same under split "days").
  static std::pair<std::string, std::string> files(const DataConfig& config) {
    const std::filesystem::path dir = home_path(config.dir);
    const auto train = (dir / config.train).string();
    return {train, config.settings.at("criteo").at("split") == "days" ? train : (dir / config.eval).string()};
  }
};

}  // namespace

std::shared_ptr<const DataFormat> criteo_format() { return std::make_shared<ClickLogFormat>(); }

}  // namespace comera
