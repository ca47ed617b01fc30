#pragma once
// Configuration of the DLRM (facebookresearch/dlrm, its Criteo Kaggle settings by default):
// bottom MLP over the dense features, one embedding table per categorical feature, dot
// interaction, top MLP to one logit. Tables from `tables.min_rows` rows up are TTM embedding
// bags; MLP layers named in `tensorized` ("bottom0", "top1", ...) are TT.
#include "core/data/criteo.h"
#include "core/models/model_config.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace comera {

class ConfigReader;

struct DlrmTables {
  int64_t min_rows = 0;  // tables with at least this many rows are TTM; 0: every table dense
  int64_t cores = 3;     // TTM cores per table (modes chosen automatically, rows padded up)
  int64_t rank = 16;     // every interior bond
};

struct DlrmConfig {
  int64_t dense_features = 13;
  int64_t embedding_dim = 16;
  std::vector<int64_t> bottom_mlp = {512, 256, 64, 16};  // the last is embedding_dim
  std::vector<int64_t> top_mlp = {512, 256, 1};          // the last is 1
  std::vector<int64_t> table_sizes = criteo_kaggle_table_sizes();
  double rank_threshold = 1e-2;
  // Dense tables' gradients sparse (only the rows looked up), as the reference DLRM's: a step
  // then costs the batch's rows, not the table. For SGD, as the reference; AdamW refuses them.
  bool sparse_gradients = false;
  DlrmTables tables;
  std::map<std::string, LinearSpec> tt_mlp;  // by layer name; absent: dense

  // Inputs of the top MLP: embedding_dim dense values and the strictly lower triangle of the
  // (tables + 1)^2 dot products.
  int64_t interaction_width() const;
  bool tensorized_table(size_t t) const;
  // MLP layer names and sizes in order: ("bottom0", 13, 512), ..., ("top2", 256, 1).
  struct Layer {
    std::string name;
    int64_t in = 0, out = 0;
  };
  std::vector<Layer> mlp_layers() const;
  DlrmConfig dense() const;
  nlohmann::json to_json() const;
};

DlrmConfig read_dlrm_config(const ConfigReader& reader);
DlrmConfig parse_dlrm_config(const nlohmann::json& json);

}  // namespace comera
