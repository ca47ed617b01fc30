#include "core/models/model_config.h"

#include "core/formats/tt_shape.h"
#include "core/formats/ttm_shape.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <utility>

namespace comera {

namespace {

// "ranks": a full list with boundary 1s, or one integer for every interior bond (capped at
// each bond's full-rank bound).
std::vector<int64_t> read_ranks(const ConfigReader& r, const std::vector<int64_t>& core_sizes) {
  const auto& v = r.value("ranks");
  if (v.is_number_integer()) {
    if (v.get<int64_t>() < 1)
      throw Error(r.key_path("ranks") + ": " + v.dump() + " is below 1 (use a rank >= 1)");
    return capped_uniform_ranks(core_sizes, v.get<int64_t>());
  }
  return r.integers("ranks");
}

// Re-throws a shape error with the config key in front, so the user knows which entry.
template <typename Fn>
void check_shape(const ConfigReader& r, Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    throw Error(r.path() + ": " + e.what());
  }
}

// model.low_rank and model.lte: {layer kind: settings} for the linear layers; a layer kind
// already given another form is an error.
const char* const kLinearKinds[] = {"attention", "ffn_in", "ffn_out", "classifier"};

template <typename Config>
auto& linear_of(Config& c, const std::string& name) {
  if (name == "attention") return c.attention;
  if (name == "ffn_in") return c.ffn_in;
  if (name == "ffn_out") return c.ffn_out;
  return c.classifier;
}

void check_single_form(const ConfigReader& r, const std::string& name, const LinearSpec& spec) {
  if (spec.tensorized || spec.low_rank > 0 || spec.lte.rank > 0)
    throw Error(r.key_path(name) + ": this layer kind is already " +
                (spec.tensorized ? "tensorized (model.tensorized)"
                 : spec.low_rank > 0 ? "low-rank (model.low_rank)" : "LTE (model.lte)") +
                "; give each layer kind one form");
}

// The (in, out) features of a linear layer kind.
std::pair<int64_t, int64_t> features_of(const ModelConfig& c, const std::string& name) {
  if (name == "ffn_in") return {c.d_model, c.ffn};
  if (name == "ffn_out") return {c.ffn, c.d_model};
  return {c.d_model, c.d_model};
}

// Each layer kind present in `r` read into its spec by `read` (its other keys are errors), which
// is given the layer's rank bound: min(in, out), above which factors add parameters and nothing
// a dense layer lacks.
template <typename Read>
void read_forms(const ConfigReader& r, ModelConfig& c, Read&& read) {
  for (const char* name : kLinearKinds) {
    if (!r.has(name)) continue;
    auto& spec = linear_of(c, name);
    check_single_form(r, name, spec);
    const auto layer = r.object(name);
    const auto [in, out] = features_of(c, name);
    read(layer, spec, std::min(in, out));
    layer.finish();
  }
  r.finish();
}

int64_t read_rank(const ConfigReader& layer, int64_t bound, const char* example) {
  if (!layer.has("rank")) throw Error(layer.key_path("rank") + ": required (" + example + ")");
  const auto rank = layer.integer("rank", 0, 1);
  if (rank > bound)
    throw Error(layer.key_path("rank") + ": " + std::to_string(rank) + " is above the layer's rank bound " +
                std::to_string(bound) + " (the smaller of its in and out features), where the factors "
                "hold more parameters than the dense layer and can express nothing more: give at most " +
                std::to_string(bound));
  return rank;
}

void read_low_rank(const ConfigReader& r, ModelConfig& c) {
  read_forms(r, c, [](const ConfigReader& layer, LinearSpec& spec, int64_t bound) {
    spec.low_rank = read_rank(layer, bound, "the factors' rank, e.g. 16");
  });
}

void read_lte(const ConfigReader& r, ModelConfig& c) {
  read_forms(r, c, [](const ConfigReader& layer, LinearSpec& spec, int64_t bound) {
    spec.lte.rank = read_rank(layer, bound, "the LoRA rank, e.g. 8");
    spec.lte.heads = layer.integer("heads", spec.lte.heads, 1);
    spec.lte.alpha = layer.number("alpha", spec.lte.alpha, 1e-12);
    spec.lte.merge_steps = layer.integer("merge_steps", spec.lte.merge_steps, 1);
  });
}

EmbeddingSpec read_embedding(const ConfigReader& parent, int64_t vocab, int64_t d_model) {
  EmbeddingSpec spec;
  if (!parent.has("embedding")) return spec;
  const auto r = parent.object("embedding");
  spec.tensorized = true;
  spec.vocab_modes = r.integers("vocab_modes");
  spec.emb_modes = r.integers("emb_modes");
  std::vector<int64_t> sizes;
  for (size_t k = 0; k < spec.vocab_modes.size() && k < spec.emb_modes.size(); ++k)
    sizes.push_back(spec.vocab_modes[k] * spec.emb_modes[k]);
  spec.ranks = read_ranks(r, sizes);
  r.finish();
  check_shape(r, [&] {
    if (spec.vocab_modes.size() != spec.emb_modes.size())
      throw Error(std::to_string(spec.vocab_modes.size()) + " vocab_modes but " +
                  std::to_string(spec.emb_modes.size()) + " emb_modes (give one of each per core)");
    TTMShape shape(vocab, spec.vocab_modes, spec.emb_modes, spec.ranks);
    if (shape.dim() != d_model)
      throw Error("emb_modes [" + join_dims(spec.emb_modes) + "] multiply to " +
                  std::to_string(shape.dim()) + ", not d_model " + std::to_string(d_model) +
                  " (choose emb_modes whose product is d_model)");
  });
  return spec;
}

}  // namespace

LinearSpec read_linear_spec(const ConfigReader& parent, const std::string& key, int64_t in, int64_t out) {
  LinearSpec spec;
  if (!parent.has(key)) return spec;
  const auto r = parent.object(key);
  spec.tensorized = true;
  spec.format = r.choice("format", spec.format, {"tt", "ttm"});
  spec.in_modes = r.integers("in_modes");
  spec.out_modes = r.integers("out_modes");
  std::vector<int64_t> sizes;
  if (spec.format == "ttm") {
    for (size_t k = 0; k < spec.in_modes.size() && k < spec.out_modes.size(); ++k)
      sizes.push_back(spec.in_modes[k] * spec.out_modes[k]);
  } else {
    sizes = spec.in_modes;
    sizes.insert(sizes.end(), spec.out_modes.begin(), spec.out_modes.end());
  }
  spec.ranks = read_ranks(r, sizes);
  r.finish();
  check_shape(r, [&] {
    if (spec.format == "tt") {
      TTShape::for_features(in, out, spec.in_modes, spec.out_modes, spec.ranks);
      return;
    }
    int64_t rows = 1;
    for (const auto n : spec.in_modes) rows *= std::max<int64_t>(n, 1);
    const TTMShape shape(rows, spec.in_modes, spec.out_modes, spec.ranks);
    if (shape.padded_vocab() != in || shape.dim() != out)
      throw Error("TTM modes " + shape.str() + " multiply to " + std::to_string(shape.padded_vocab()) +
                  " -> " + std::to_string(shape.dim()) + " but the layer is " + std::to_string(in) +
                  " -> " + std::to_string(out) + "; choose modes whose products match");
  });
  return spec;
}

nlohmann::json linear_spec_json(const LinearSpec& s) {
  nlohmann::json j = {{"in_modes", s.in_modes}, {"out_modes", s.out_modes}, {"ranks", s.ranks}};
  if (s.format != "tt") j["format"] = s.format;  // written only when not the default: older records keep their identity
  return j;
}

namespace {

void baseline_json(const ModelConfig& c, nlohmann::json& out) {
  nlohmann::json low = nlohmann::json::object(), lte = nlohmann::json::object();
  for (const char* name : kLinearKinds) {
    const auto& s = linear_of(c, name);
    if (s.low_rank > 0) low[name] = {{"rank", s.low_rank}};
    if (s.lte.rank > 0)
      lte[name] = {{"rank", s.lte.rank}, {"heads", s.lte.heads}, {"alpha", s.lte.alpha},
                   {"merge_steps", s.lte.merge_steps}};
  }
  if (!low.empty()) out["low_rank"] = low;
  if (!lte.empty()) out["lte"] = lte;
}

}  // namespace

ModelConfig ModelConfig::dense() const {
  ModelConfig c = *this;
  c.embedding = {};
  c.attention = c.ffn_in = c.ffn_out = c.classifier = {};
  return c;
}

bool ModelConfig::any_tensorized() const {
  return embedding.tensorized || attention.tensorized || ffn_in.tensorized || ffn_out.tensorized ||
         classifier.tensorized;
}

nlohmann::json ModelConfig::to_json() const {
  nlohmann::json t = nlohmann::json::object();
  if (embedding.tensorized)
    t["embedding"] = {{"vocab_modes", embedding.vocab_modes},
                      {"emb_modes", embedding.emb_modes},
                      {"ranks", embedding.ranks}};
  if (attention.tensorized) t["attention"] = linear_spec_json(attention);
  if (ffn_in.tensorized) t["ffn_in"] = linear_spec_json(ffn_in);
  if (ffn_out.tensorized) t["ffn_out"] = linear_spec_json(ffn_out);
  if (classifier.tensorized) t["classifier"] = linear_spec_json(classifier);
  nlohmann::json out = {{"vocab", vocab}, {"d_model", d_model}, {"heads", heads},
                        {"layers", layers}, {"ffn", ffn}, {"max_positions", max_positions},
                        {"segments", segments}, {"classes", classes}, {"masked_lm", masked_lm},
                        {"dropout", dropout}, {"layer_norm_eps", layer_norm_eps},
                        {"rank_threshold", rank_threshold}, {"tensorized", t}};
  baseline_json(*this, out);
  return out;
}

ModelConfig read_model_config(const ConfigReader& r) {
  ModelConfig c;
  c.vocab = r.integer("vocab", c.vocab, 1);
  c.d_model = r.integer("d_model", c.d_model, 1);
  c.heads = r.integer("heads", c.heads, 1);
  c.layers = r.integer("layers", c.layers, 0);
  c.ffn = r.integer("ffn", c.ffn, 1);
  c.max_positions = r.integer("max_positions", c.max_positions, 1);
  c.segments = r.integer("segments", c.segments, 1);
  c.classes = r.integer("classes", c.classes, 0);
  c.masked_lm = r.boolean("masked_lm", c.masked_lm);
  c.dropout = r.number("dropout", c.dropout, 0, 0.99);
  c.layer_norm_eps = r.number("layer_norm_eps", c.layer_norm_eps, 0, 1);
  c.rank_threshold = r.number("rank_threshold", c.rank_threshold, 0, 1);
  if (c.d_model % c.heads != 0)
    throw Error(r.key_path("heads") + ": " + std::to_string(c.heads) + " does not divide d_model " +
                std::to_string(c.d_model) + " (choose a divisor of d_model, e.g. " +
                std::to_string(c.d_model % 12 == 0 ? 12 : 1) + ")");
  if (c.classes == 0 && !c.masked_lm)
    throw Error(r.key_path("classes") + ": the model has no head (set classes >= 1 for "
                "classification or masked_lm: true)");
  if (r.has("tensorized")) {
    const auto t = r.object("tensorized");
    c.embedding = read_embedding(t, c.vocab, c.d_model);
    c.attention = read_linear_spec(t, "attention", c.d_model, c.d_model);
    c.ffn_in = read_linear_spec(t, "ffn_in", c.d_model, c.ffn);
    c.ffn_out = read_linear_spec(t, "ffn_out", c.ffn, c.d_model);
    c.classifier = read_linear_spec(t, "classifier", c.d_model, c.d_model);
    t.finish();
  }
  if (r.has("low_rank")) read_low_rank(r.object("low_rank"), c);
  if (r.has("lte")) read_lte(r.object("lte"), c);
  r.finish();
  return c;
}

ModelConfig parse_model_config(const nlohmann::json& json) {
  return read_model_config(ConfigReader(json, "model"));
}

}  // namespace comera
