#pragma once
// Configuration of the BERT-style encoder (METHOD §7): sizes, dropout, and for each layer kind
// whether it is dense, tensor-train (with its modes and ranks), low-rank or LTE (baselines).
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace comera {

class ConfigReader;

// LTE's LoRA heads for one layer kind (lte_linear.h); rank 0: not LTE.
struct LteSpec {
  int64_t rank = 0, heads = 4, merge_steps = 1;
  double alpha = 1;
};

// A linear layer kind: TT when `tensorized` (ranks with boundary 1s), W = A·B when
// low_rank > 0 (model.low_rank), LTE when lte.rank > 0 (model.lte), else dense.
struct LinearSpec {
  bool tensorized = false;
  // "tt": TTLinear (input modes, then output modes); "ttm": TTMLinear (a core per mode pair).
  std::string format = "tt";
  std::vector<int64_t> in_modes, out_modes, ranks;
  int64_t low_rank = 0;
  LteSpec lte;
};

// parent[key] as a TT or TTM layer in -> out (absent: dense), shapes checked; errors name the key.
LinearSpec read_linear_spec(const ConfigReader& parent, const std::string& key, int64_t in, int64_t out);
nlohmann::json linear_spec_json(const LinearSpec& spec);

// The word embedding built as TTM when `tensorized`.
struct EmbeddingSpec {
  bool tensorized = false;
  std::vector<int64_t> vocab_modes, emb_modes, ranks;
};

struct ModelConfig {
  int64_t vocab = 30522;
  int64_t d_model = 768;
  int64_t heads = 12;
  int64_t layers = 6;
  int64_t ffn = 3072;
  int64_t max_positions = 512;
  int64_t segments = 2;
  int64_t classes = 3;       // 0: no classification head
  bool masked_lm = false;    // build the masked-LM head
  double dropout = 0.1;
  double layer_norm_eps = 1e-12;
  double rank_threshold = 1e-2;  // |d| below this prunes a rank slice (METHOD §1)

  EmbeddingSpec embedding;
  LinearSpec attention;   // Q, K, V and O
  LinearSpec ffn_in;      // d_model -> ffn
  LinearSpec ffn_out;     // ffn -> d_model
  LinearSpec classifier;  // the head's first layer, d_model -> d_model

  // The same architecture with every layer dense (low-rank and LTE layers too).
  ModelConfig dense() const;
  bool any_tensorized() const;
  nlohmann::json to_json() const;
};

// Parses and validates (shapes against sizes, ranks against their bounds); errors name the
// key, e.g. "model.tensorized.ffn_in: ...".
ModelConfig read_model_config(const ConfigReader& reader);
ModelConfig parse_model_config(const nlohmann::json& json);

}  // namespace comera
