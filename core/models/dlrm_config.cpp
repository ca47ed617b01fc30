#include "core/models/dlrm_config.h"

#include "core/util/config_reader.h"
#include "core/util/error.h"

#include <nlohmann/json.hpp>

namespace comera {

int64_t DlrmConfig::interaction_width() const {
  const int64_t vectors = static_cast<int64_t>(table_sizes.size()) + 1;
  return embedding_dim + vectors * (vectors - 1) / 2;
}

bool DlrmConfig::tensorized_table(size_t t) const {
  return tables.min_rows > 0 && table_sizes.at(t) >= tables.min_rows;
}

std::vector<DlrmConfig::Layer> DlrmConfig::mlp_layers() const {
  std::vector<Layer> layers;
  int64_t in = dense_features;
  for (size_t i = 0; i < bottom_mlp.size(); ++i) {
    layers.push_back({"bottom" + std::to_string(i), in, bottom_mlp[i]});
    in = bottom_mlp[i];
  }
  in = interaction_width();
  for (size_t i = 0; i < top_mlp.size(); ++i) {
    layers.push_back({"top" + std::to_string(i), in, top_mlp[i]});
    in = top_mlp[i];
  }
  return layers;
}

DlrmConfig DlrmConfig::dense() const {
  DlrmConfig c = *this;
  c.tables.min_rows = 0;
  c.tt_mlp.clear();
  return c;
}

nlohmann::json DlrmConfig::to_json() const {
  nlohmann::json t = nlohmann::json::object();
  if (tables.min_rows > 0)
    t["tables"] = {{"min_rows", tables.min_rows}, {"cores", tables.cores}, {"ranks", tables.rank}};
  for (const auto& [name, spec] : tt_mlp) t[name] = linear_spec_json(spec);
  nlohmann::json j = {{"dense_features", dense_features}, {"embedding_dim", embedding_dim},
                      {"bottom_mlp", bottom_mlp}, {"top_mlp", top_mlp}, {"table_sizes", table_sizes},
                      {"rank_threshold", rank_threshold}, {"tensorized", t}};
  if (sparse_gradients) j["sparse_gradients"] = true;
  return j;
}

DlrmConfig read_dlrm_config(const ConfigReader& r) {
  DlrmConfig c;
  c.dense_features = r.integer("dense_features", c.dense_features, 1);
  c.embedding_dim = r.integer("embedding_dim", c.embedding_dim, 1);
  if (r.has("bottom_mlp")) c.bottom_mlp = r.integers("bottom_mlp");
  if (r.has("top_mlp")) c.top_mlp = r.integers("top_mlp");
  if (r.has("table_sizes")) c.table_sizes = r.integers("table_sizes");
  c.rank_threshold = r.number("rank_threshold", c.rank_threshold, 0, 1);
  c.sparse_gradients = r.boolean("sparse_gradients", c.sparse_gradients);
  if (c.bottom_mlp.empty() || c.bottom_mlp.back() != c.embedding_dim)
    throw Error(r.key_path("bottom_mlp") + ": its last layer must output embedding_dim (" +
                std::to_string(c.embedding_dim) + ") values, the interaction's vector 0");
  if (c.top_mlp.empty() || c.top_mlp.back() != 1)
    throw Error(r.key_path("top_mlp") + ": its last layer must output 1 value, the click logit");
  if (c.table_sizes.empty())
    throw Error(r.key_path("table_sizes") + ": give one row count per categorical feature");
  if (r.has("tensorized")) {
    const auto t = r.object("tensorized");
    if (t.has("tables")) {
      const auto tables = t.object("tables");
      c.tables.min_rows = tables.integer("min_rows", 0, 1);
      c.tables.cores = tables.integer("cores", c.tables.cores, 1, 8);
      c.tables.rank = tables.integer("ranks", c.tables.rank, 1);
      tables.finish();
    }
    for (const auto& layer : c.mlp_layers()) {
      auto spec = read_linear_spec(t, layer.name, layer.in, layer.out);
      if (spec.tensorized) c.tt_mlp[layer.name] = std::move(spec);
    }
    t.finish();
  }
  r.finish();
  return c;
}

DlrmConfig parse_dlrm_config(const nlohmann::json& json) {
  return read_dlrm_config(ConfigReader(json, "model"));
}

}  // namespace comera
