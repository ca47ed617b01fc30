#include "search/sweep/shape_choices.h"

#include "core/formats/factorize.h"
#include "core/models/model_config.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace comera::sweep {

namespace {

int64_t product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
}

// The largest interior rank of a layer entry ("ranks": list or one integer).
int64_t interior_rank(const nlohmann::json& layer) {
  const auto& ranks = layer.at("ranks");
  if (ranks.is_number_integer()) return ranks.get<int64_t>();
  int64_t r = 1;
  for (const auto& x : ranks) r = std::max(r, x.get<int64_t>());
  return r;
}

nlohmann::json factorised(const nlohmann::json& base, int d, const std::string& where) {
  const nlohmann::json model_json = base.at("model");
  const ModelConfig model = parse_model_config(model_json);
  const nlohmann::json& layers = model_json.value("tensorized", nlohmann::json::object());
  if (layers.empty())
    throw Error(where + ": the base experiment has no model.tensorized layers to factorise");
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, layer] : layers.items()) {
    const int64_t rank = interior_rank(layer);
    if (name == "embedding") {
      out[name] = {{"vocab_modes", vocab_modes(model.vocab, d)},
                   {"emb_modes", balanced_factorizations(model.d_model, d).front()},
                   {"ranks", rank}};
      continue;
    }
    const auto features = [&]() -> std::pair<int64_t, int64_t> {
      if (name == "ffn_in") return {model.d_model, model.ffn};
      if (name == "ffn_out") return {model.ffn, model.d_model};
      return {model.d_model, model.d_model};  // attention, classifier
    }();
    const auto modes = propose_tt_modes(features.first, features.second, d, 1).front();
    out[name] = {{"in_modes", modes.first}, {"out_modes", modes.second}, {"ranks", rank}};
  }
  return out;
}

}  // namespace

std::vector<int64_t> vocab_modes(int64_t vocab, int d) {
  if (vocab < 1 || d < 1) throw Error("vocabulary modes: need vocab >= 1 and d >= 1");
  auto start = static_cast<int64_t>(std::ceil(std::pow(static_cast<double>(vocab), 1.0 / d)));
  std::vector<int64_t> modes(static_cast<size_t>(d), start);
  while (product(modes) < vocab) ++modes[0];  // pow's rounding
  for (auto& m : modes)
    while (m > 1) {
      --m;
      if (product(modes) < vocab) {
        ++m;
        break;
      }
    }
  std::sort(modes.rbegin(), modes.rend());
  return modes;
}

std::vector<Choice> shape_choices(const nlohmann::json& entries, const nlohmann::json& base,
                                  const std::string& where) {
  std::vector<Choice> choices;
  for (size_t i = 0; i < entries.size(); ++i) {
    const ConfigReader r(entries[i], where + "[" + std::to_string(i) + "]");
    if (r.has("factorise") == r.has("tensorized"))
      throw Error(r.path() + ": give {\"factorise\": d} or {\"name\": .., \"tensorized\": {..}}");
    if (r.has("factorise")) {
      const auto d = static_cast<int>(r.integer("factorise", 0, 1, 8));
      r.finish();
      choices.push_back({{{"shape", "d=" + std::to_string(d)}},
                         {{"model.tensorized", factorised(base, d, r.path())}}});
      continue;
    }
    const std::string name = r.string("name", "");
    if (name.empty()) throw Error(r.path() + ": name the explicit shape (\"name\": \"paper\")");
    choices.push_back({{{"shape", name}}, {{"model.tensorized", r.value("tensorized")}}});
    r.finish();
  }
  return choices;
}

void cap_ranks(nlohmann::json& experiment, int64_t cap) {
  auto& model = experiment["model"];
  if (!model.contains("tensorized")) return;
  for (auto& [name, layer] : model["tensorized"].items()) {
    (void)name;
    auto& ranks = layer["ranks"];
    if (ranks.is_number_integer())
      ranks = std::min(ranks.get<int64_t>(), cap);
    else
      for (auto& x : ranks) x = std::min(x.get<int64_t>(), cap);
  }
}

}  // namespace comera::sweep
