#include "core/training/method.h"

#include "core/util/config_reader.h"
#include "core/util/error.h"

namespace comera {

namespace {

// The layer kinds a baseline replaces: the attention and FFN linears, as GaLore's targets.
const char* const kTargets[] = {"attention", "ffn_in", "ffn_out"};

// Optimiser keys that only AdamW-like kinds read; others are dropped when the kind changes.
const char* const kAdamKeys[] = {"kind", "lr_cores", "lr_ranks", "lr_other", "weight_decay", "betas", "eps"};

nlohmann::json adam_keys(const nlohmann::json& optimizer) {
  nlohmann::json out = nlohmann::json::object();
  for (const char* key : kAdamKeys)
    if (optimizer.contains(key)) out[key] = optimizer[key];
  return out;
}

// Settings of one method, defaults filled in; unknown keys are errors.
struct Settings {
  int64_t galore_rank = 128, update_proj_gap = 200;
  double galore_scale = 0.25;
  int64_t lte_rank = 32, lte_heads = 4, merge_steps = 1;
  double lte_alpha = 32;
  int64_t lowrank_rank = 32;
};

Settings read_settings(const nlohmann::json& experiment) {
  Settings s;
  if (!experiment.contains("method_settings")) return s;
  const ConfigReader r(experiment["method_settings"], "method_settings");
  if (r.has("galore")) {
    const auto g = r.object("galore");
    s.galore_rank = g.integer("rank", s.galore_rank, 1);
    s.update_proj_gap = g.integer("update_proj_gap", s.update_proj_gap, 1);
    s.galore_scale = g.number("scale", s.galore_scale);
    g.finish();
  }
  if (r.has("lte")) {
    const auto l = r.object("lte");
    s.lte_rank = l.integer("rank", s.lte_rank, 1);
    s.lte_heads = l.integer("heads", s.lte_heads, 1);
    s.lte_alpha = l.number("alpha", s.lte_alpha, 1e-12);
    s.merge_steps = l.integer("merge_steps", s.merge_steps, 1);
    l.finish();
  }
  if (r.has("lowrank")) {
    const auto l = r.object("lowrank");
    s.lowrank_rank = l.integer("rank", s.lowrank_rank, 1);
    l.finish();
  }
  r.finish();
  return s;
}

}  // namespace

const std::vector<std::string>& method_names() {
  static const std::vector<std::string> names{"dense", "tt", "galore", "lte", "lowrank"};
  return names;
}

nlohmann::json apply_method(nlohmann::json e) {
  if (!e.is_object() || !e.contains("method")) return e;
  const ConfigReader top(e, "");
  const auto method = top.choice("method", "", method_names());
  const auto settings = read_settings(e);
  if (!e.contains("model") || !e["model"].is_object())
    throw Error("method: " + method + " rewrites the model section, but there is none (add \"model\")");
  auto& model = e["model"];
  if (model.value("kind", std::string("transformer")) != "transformer")
    throw Error("method: " + method + " replaces a transformer's layers, but model.kind is '" +
                model["kind"].get<std::string>() + "' (drop \"method\" and configure the model directly)");
  auto& training = e["training"];
  if (training.is_null()) training = nlohmann::json::object();
  auto optimizer = training.value("optimizer", nlohmann::json::object());

  const bool keep_tt = method == "tt";
  if (keep_tt && model.value("tensorized", nlohmann::json::object()).empty())
    throw Error("method: tt needs tensorized layers, and model.tensorized is empty (add them, or "
                "choose method dense)");
  if (!keep_tt) {
    model.erase("tensorized");
    training.erase("late_stage");
  }
  model.erase("low_rank");
  model.erase("lte");
  if (method == "galore") {
    optimizer = adam_keys(optimizer);
    optimizer.update({{"kind", "galore"}, {"rank", settings.galore_rank},
                      {"update_proj_gap", settings.update_proj_gap}, {"scale", settings.galore_scale}});
  } else if (optimizer.value("kind", std::string("adamw")) == "galore") {
    optimizer = adam_keys(optimizer);
    optimizer["kind"] = "adamw";
  }
  if (!optimizer.empty()) training["optimizer"] = optimizer;
  if (method == "lowrank")
    for (const char* name : kTargets) model["low_rank"][name] = {{"rank", settings.lowrank_rank}};
  if (method == "lte")
    for (const char* name : kTargets)
      model["lte"][name] = {{"rank", settings.lte_rank}, {"heads", settings.lte_heads},
                            {"alpha", settings.lte_alpha}, {"merge_steps", settings.merge_steps}};
  return e;
}

}  // namespace comera
