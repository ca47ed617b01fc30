#include "core/models/dlrm_kind.h"

#include "core/data/dataset.h"
#include "core/formats/factorize.h"
#include "core/models/dlrm.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>

namespace comera {

namespace {

constexpr const char* kCtr = "ctr";

class DlrmTask : public Task {
 public:
  explicit DlrmTask(const DlrmConfig& config) : model_(config) {}

  torch::nn::Module& model() override { return *model_; }

  TaskOutput forward(const Batch& b) override {
    const auto logits = model_->forward(b.at("dense"), b.at("sparse"));
    const auto targets = b.at("labels").to(logits.scalar_type());
    TaskOutput out;
    // BCE of sigmoid(logit), computed from the logit for stability.
    out.loss = at::binary_cross_entropy_with_logits(logits, targets);
    out.correct = ((logits > 0) == (targets > 0.5)).sum();
    out.tokens = at::scalar_tensor(static_cast<double>(logits.size(0)), logits.options());
    out.predictions = logits.size(0);
    out.scores = at::sigmoid(logits).detach();
    out.targets = targets;
    return out;
  }

  // AUC needs a click and a non-click among the evaluation examples.
  void check_eval_set(const Dataset& eval) const override {
    int64_t positives = 0, examples = 0;
    const auto stream = eval.batches(4096);
    Batch b;
    while (stream->next(b)) {
      positives += (b.at("labels") > 0.5).sum().item<int64_t>();
      examples += b.at("labels").size(0);
    }
    if (examples > 0 && (positives == 0 || positives == examples))
      throw Error("the evaluation set's " + std::to_string(examples) + " examples are all " +
                  (positives == 0 ? "non-clicks (label 0)" : "clicks (label 1)") +
                  ": its AUC is undefined. Evaluate on examples with both labels (another data.eval, "
                  "a larger data.eval_limit, or data.criteo.eval_part)");
  }

  // No head: a run initialised from a checkpoint takes every layer.
  bool is_head(const std::string& name) const override {
    (void)name;
    return false;
  }

  // Every layer sees one row (one lookup per table) per example.
  int64_t layer_rows(const std::string& layer, int64_t batch, int64_t length) const override {
    (void)layer;
    (void)length;
    return batch;
  }

  Batch synthetic_batch(int64_t batch, int64_t length, const at::Generator& generator) const override {
    (void)length;
    const auto& c = model_->config();
    Batch b(batch);
    b.set("dense", at::log1p(at::rand({batch, c.dense_features}, generator) * 100));
    std::vector<at::Tensor> ids;
    for (const int64_t rows : c.table_sizes) ids.push_back(at::randint(0, rows, {batch}, generator, at::kLong));
    b.set("sparse", at::stack(ids, 1));
    b.set("labels", at::randint(0, 2, {batch}, generator, at::kFloat));
    return b;
  }

 private:
  Dlrm model_;
};

// The largest interior rank of an MLP layer entry.
int64_t interior_rank(const LinearSpec& spec) {
  return *std::max_element(spec.ranks.begin(), spec.ranks.end());
}

class DlrmKind : public ModelKind {
 public:
  std::string name() const override { return "dlrm"; }
  std::vector<std::string> tasks() const override { return {kCtr}; }
  std::vector<std::string> eval_metrics(const TaskSpec& task) const override {
    (void)task;
    return {"auc"};
  }

  nlohmann::json read(const ConfigReader& r, const TaskSpec& task) const override {
    (void)task;
    return read_dlrm_config(r).to_json();
  }

  void check_data_parallel(const nlohmann::json& settings) const override {
    if (parse_dlrm_config(settings).sparse_gradients)
      throw Error("model.sparse_gradients: data-parallel training all-reduces dense gradients, and a "
                  "sparse one would have to be gathered row by row from every rank: set "
                  "model.sparse_gradients to false, or train with one process");
  }

  nlohmann::json dense(const nlohmann::json& settings) const override {
    return parse_dlrm_config(settings).dense().to_json();
  }

  nlohmann::json body(const nlohmann::json& settings) const override { return settings; }

  std::string summary(const nlohmann::json& settings) const override {
    const auto c = parse_dlrm_config(settings);
    int64_t tt = 0;
    for (size_t t = 0; t < c.table_sizes.size(); ++t) tt += c.tensorized_table(t);
    return std::to_string(c.table_sizes.size()) + " tables (" + std::to_string(tt) +
           " TTM), dim " + std::to_string(c.embedding_dim);
  }

  nlohmann::json factorise(const nlohmann::json& settings, int d) const override {
    const auto c = parse_dlrm_config(settings);
    if (c.tables.min_rows == 0 && c.tt_mlp.empty())
      throw Error("the model has no tensorized tables or layers (model.tensorized) to factorise");
    nlohmann::json out = nlohmann::json::object();
    if (c.tables.min_rows > 0)
      out["tables"] = {{"min_rows", c.tables.min_rows}, {"cores", d}, {"ranks", c.tables.rank}};
    for (const auto& layer : c.mlp_layers()) {
      const auto it = c.tt_mlp.find(layer.name);
      if (it == c.tt_mlp.end()) continue;
      const auto modes = propose_tt_modes(layer.in, layer.out, d, 1).front();
      out[layer.name] = {{"in_modes", modes.first}, {"out_modes", modes.second},
                         {"ranks", interior_rank(it->second)}};
    }
    return out;
  }

  std::unique_ptr<Task> build(const nlohmann::json& settings, const TaskSpec& task,
                              const DataInfo& data) const override {
    if (task.kind != kCtr) throw Error("a dlrm is not trained for '" + task.kind + "'");
    const auto c = parse_dlrm_config(settings);
    if (data.dense_features > 0 && data.dense_features != c.dense_features)
      throw Error("model.dense_features: " + std::to_string(c.dense_features) + " but the data has " +
                  std::to_string(data.dense_features) + " integer features per line (set it to " +
                  std::to_string(data.dense_features) + ")");
    if (!data.table_sizes.empty()) {
      if (data.table_sizes.size() != c.table_sizes.size())
        throw Error("model.table_sizes: " + std::to_string(c.table_sizes.size()) +
                    " tables but the data has " + std::to_string(data.table_sizes.size()) +
                    " categorical features (give one table per feature)");
      for (size_t t = 0; t < c.table_sizes.size(); ++t)
        if (data.table_sizes[t] > c.table_sizes[t])
          throw Error("model.table_sizes[" + std::to_string(t) + "]: " + std::to_string(c.table_sizes[t]) +
                      " rows but the data's ids go up to " + std::to_string(data.table_sizes[t] - 1) +
                      " (use the data's table sizes, data.table_sizes)");
    }
    return std::make_unique<DlrmTask>(c);
  }
};

}  // namespace

std::shared_ptr<const ModelKind> dlrm_kind() { return std::make_shared<DlrmKind>(); }

}  // namespace comera
