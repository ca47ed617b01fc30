#include "core/models/transformer_kind.h"

#include "core/data/token_dataset.h"
#include "core/data/token_masking.h"
#include "core/formats/factorize.h"
#include "core/models/model_config.h"
#include "core/models/transformer.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>

namespace comera {

namespace {

constexpr const char* kClassification = "classification";
constexpr const char* kMaskedLM = "masked_lm";

// Both tasks read token batches (pair_dataset.h's tensors) and differ in head and targets.
class TransformerTask : public Task {
 public:
  explicit TransformerTask(const ModelConfig& config) : model_(config) {}

  torch::nn::Module& model() override { return *model_; }

  bool is_head(const std::string& name) const override {
    return name.rfind("masked_lm.", 0) == 0 || name.rfind("classification.", 0) == 0;
  }

  bool has_sequences() const override { return true; }
  Batch cut_to_length(Batch batch, int64_t length) const override { return cut_tokens(std::move(batch), length); }

  // The classification head reads [CLS] only; every other layer sees every token.
  int64_t layer_rows(const std::string& layer, int64_t batch, int64_t length) const override {
    return layer.rfind("classification.", 0) == 0 ? batch : batch * length;
  }

  Batch synthetic_batch(int64_t batch, int64_t length, const at::Generator& generator) const override {
    const auto& c = model_->config();
    if (length > c.max_positions)
      throw Error("sequence length " + std::to_string(length) + " exceeds model.max_positions " +
                  std::to_string(c.max_positions) + " (use a shorter sequence)");
    Batch b(batch);
    b.set("input_ids", at::randint(0, c.vocab, {batch, length}, generator, at::kLong));
    auto segments = at::zeros({batch, length}, at::kLong);
    segments.narrow(1, length / 2, length - length / 2).fill_(1);
    b.set("segment_ids", segments);
    b.set("attention_mask", at::ones({batch, length}, at::kLong));
    b.set("labels", at::randint(0, std::max<int64_t>(1, c.classes), {batch}, generator, at::kLong));
    return b;
  }

 protected:
  static TaskOutput output(at::Tensor loss, at::Tensor correct, const at::Tensor& targets,
                           const Batch& batch) {
    TaskOutput out;
    out.loss = std::move(loss);
    out.correct = std::move(correct);
    out.tokens = batch.at("attention_mask").sum();
    out.predictions = targets.size(0);
    return out;
  }

  Transformer model_;
};

class ClassificationTask : public TransformerTask {
 public:
  using TransformerTask::TransformerTask;

  TaskOutput forward(const Batch& b) override {
    const auto logits = model_->classify(b.at("input_ids"), b.at("segment_ids"), b.at("attention_mask"));
    const auto& labels = b.at("labels");
    return output(at::cross_entropy_loss(logits, labels), (logits.argmax(-1) == labels).sum(), labels, b);
  }
};

class MaskedLMTask : public TransformerTask {
 public:
  MaskedLMTask(const ModelConfig& config, MaskingOptions masking)
      : TransformerTask(config), masking_(std::move(masking)) {}

  // Choosing the positions reads the batch (nonzero): on the host, where the batch still is.
  Batch prepare(Batch batch, const at::Generator& generator) const override {
    const auto m = mask_tokens(batch.at("input_ids"), batch.at("attention_mask"), masking_, generator);
    batch.set("masked_ids", m.input_ids);
    batch.set("masked_positions", m.positions);
    batch.set("masked_targets", m.targets);
    return batch;
  }

  TaskOutput forward(const Batch& b) override {
    const auto& targets = b.at("masked_targets");
    const auto l = model_->masked_lm_loss(b.at("masked_ids"), b.at("segment_ids"),
                                          b.at("attention_mask"), b.at("masked_positions"), targets);
    return output(l.loss, l.correct, targets, b);
  }

  Batch synthetic_batch(int64_t batch, int64_t length, const at::Generator& generator) const override {
    return prepare(TransformerTask::synthetic_batch(batch, length, generator), generator);
  }

 private:
  MaskingOptions masking_;
};

// The largest interior rank of a layer entry (a full rank list).
int64_t interior_rank(const nlohmann::json& layer) {
  int64_t r = 1;
  for (const auto& x : layer.at("ranks")) r = std::max(r, x.get<int64_t>());
  return r;
}

class TransformerKind : public ModelKind {
 public:
  std::string name() const override { return "transformer"; }
  std::vector<std::string> tasks() const override { return {kClassification, kMaskedLM}; }

  nlohmann::json read(const ConfigReader& r, const TaskSpec& task) const override {
    const auto c = read_model_config(r);
    if (task.kind == kClassification && c.classes == 0)
      throw Error(r.key_path("classes") + ": training.task classification needs a classification "
                  "head (set classes >= 1)");
    if (task.kind == kMaskedLM && !c.masked_lm)
      throw Error(r.key_path("masked_lm") + ": training.task masked_lm needs a masked-LM head "
                  "(set model.masked_lm: true)");
    return c.to_json();
  }

  nlohmann::json dense(const nlohmann::json& settings) const override {
    return parse_model_config(settings).dense().to_json();
  }

  // Baselines replace the attention and FFN linears (GaLore's targets too); the embeddings and
  // the pooler stay as configured.
  nlohmann::json apply_method(nlohmann::json model, const MethodRequest& m) const override {
    if (m.method == "tt") {
      if (!compressed(model))
        throw Error("method: tt needs tensorized layers, and model.tensorized is empty (add them, or "
                    "choose method dense)");
    } else {
      model.erase("tensorized");
    }
    model.erase("low_rank");
    model.erase("lte");
    for (const char* layer : {"attention", "ffn_in", "ffn_out"}) {
      if (m.method == "lowrank") model["low_rank"][layer] = {{"rank", m.lowrank_rank}};
      if (m.method == "lte")
        model["lte"][layer] = {{"rank", m.lte_rank}, {"heads", m.lte_heads}, {"alpha", m.lte_alpha},
                               {"merge_steps", m.merge_steps}};
    }
    return model;
  }

  nlohmann::json without_compression(nlohmann::json model) const override {
    for (const char* form : {"tensorized", "low_rank", "lte"}) model.erase(form);
    return model;
  }

  nlohmann::json body(const nlohmann::json& settings) const override {
    auto body = settings;
    for (const char* key : {"classes", "masked_lm", "dropout"}) body.erase(key);
    return body;
  }

  std::string summary(const nlohmann::json& settings) const override {
    const auto c = parse_model_config(settings);
    return std::to_string(c.layers) + " layers, d_model " + std::to_string(c.d_model);
  }

  nlohmann::json factorise(const nlohmann::json& settings, int d) const override {
    const auto c = parse_model_config(settings);
    const auto& layers = settings.at("tensorized");
    if (layers.empty()) throw Error("the model has no tensorized layers (model.tensorized) to factorise");
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [name, layer] : layers.items()) {
      const int64_t rank = interior_rank(layer);
      if (name == "embedding") {
        const auto modes = propose_ttm_modes(c.vocab, c.d_model, d);
        out[name] = {{"vocab_modes", modes.vocab_modes}, {"emb_modes", modes.emb_modes},
                     {"ranks", rank}};
        continue;
      }
      const auto features = [&]() -> std::pair<int64_t, int64_t> {
        if (name == "ffn_in") return {c.d_model, c.ffn};
        if (name == "ffn_out") return {c.ffn, c.d_model};
        return {c.d_model, c.d_model};  // attention, classifier
      }();
      const auto modes = propose_tt_modes(features.first, features.second, d, 1).front();
      out[name] = {{"in_modes", modes.first}, {"out_modes", modes.second}, {"ranks", rank}};
      // A TT matrix takes the same d input and d output modes, one pair per core.
      if (layer.contains("format")) out[name]["format"] = layer.at("format");
    }
    return out;
  }

  std::unique_ptr<Task> build(const nlohmann::json& settings, const TaskSpec& task,
                              const DataInfo& data) const override {
    const auto c = parse_model_config(settings);
    if (data.vocab_size > c.vocab)
      throw Error("the vocabulary has " + std::to_string(data.vocab_size) +
                  " tokens but model.vocab is " + std::to_string(c.vocab) +
                  " (raise model.vocab to at least the vocabulary size)");
    if (data.segments > c.segments)
      throw Error("model.segments: " + std::to_string(c.segments) + " but the data has " +
                  std::to_string(data.segments) + " segments per example (sentence pairs need 2); "
                  "set model.segments to at least " + std::to_string(data.segments));
    if (task.kind == kClassification && data.classes > c.classes)
      throw Error("model.classes: " + std::to_string(c.classes) + " but the data has " +
                  std::to_string(data.classes) + " classes (labels up to " +
                  std::to_string(data.classes - 1) + "); set model.classes to at least " +
                  std::to_string(data.classes));
    if (task.kind == kClassification) return std::make_unique<ClassificationTask>(c);
    if (task.kind != kMaskedLM) throw Error("a transformer is not trained for '" + task.kind + "'");
    MaskingOptions m;
    m.probability = task.mask_probability;
    m.mask_id = data.mask_id;
    m.vocab_size = data.vocab_size > 0 ? data.vocab_size : c.vocab;
    m.never = data.special_ids;
    // Benchmarks have no vocabulary: any id serves as [MASK] there.
    if (data.vocab_size == 0 && m.mask_id < 0) m.mask_id = 0;
    if (m.mask_id < 0)
      throw Error("masked-LM training needs a vocabulary with a [MASK] token (use a BERT vocab.txt)");
    return std::make_unique<MaskedLMTask>(c, std::move(m));
  }
};

}  // namespace

std::shared_ptr<const ModelKind> transformer_kind() { return std::make_shared<TransformerKind>(); }

}  // namespace comera
