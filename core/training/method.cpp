#include "core/training/method.h"

#include "core/models/model_kind.h"
#include "core/training/checkpoint.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"

#include <map>

namespace comera {

namespace {

// Optimiser keys that only AdamW-like kinds read; others are dropped when the kind changes.
const char* const kAdamKeys[] = {"kind", "lr_cores", "lr_ranks", "lr_other", "weight_decay", "betas", "eps"};

nlohmann::json adam_keys(const nlohmann::json& optimizer) {
  nlohmann::json out = nlohmann::json::object();
  for (const char* key : kAdamKeys)
    if (optimizer.contains(key)) out[key] = optimizer[key];
  return out;
}

// GaLore's settings; the layer methods' are the model kind's request.
struct GaloreSettings {
  int64_t rank = 128, update_proj_gap = 200;
  double scale = 0.25;
};

// Settings of each method, defaults filled in; unknown keys are errors.
struct Settings {
  GaloreSettings galore;
  MethodRequest layers;
  std::map<std::string, nlohmann::json> optimizer;  // by method: keys laid over training.optimizer
};

// A method's own learning rates: `"optimizer": {...}` with AdamW's keys, checked by the optimiser
// section's reader once laid over it.
void read_optimizer(const ConfigReader& entry, const std::string& method, Settings& s) {
  if (!entry.has("optimizer")) return;
  const auto o = entry.object("optimizer");
  nlohmann::json patch = nlohmann::json::object();
  for (const char* key : kAdamKeys)
    if (std::string(key) != "kind" && o.has(key)) patch[key] = o.value(key);
  o.finish();
  s.optimizer[method] = patch;
}

Settings read_settings(const nlohmann::json& experiment) {
  Settings s;
  if (!experiment.contains("method_settings")) return s;
  const ConfigReader r(experiment["method_settings"], "method_settings");
  for (const char* method : {"dense", "tt"})
    if (r.has(method)) {
      const auto m = r.object(method);
      read_optimizer(m, method, s);
      m.finish();
    }
  if (r.has("galore")) {
    const auto g = r.object("galore");
    read_optimizer(g, "galore", s);
    s.galore.rank = g.integer("rank", s.galore.rank, 1);
    s.galore.update_proj_gap = g.integer("update_proj_gap", s.galore.update_proj_gap, 1);
    s.galore.scale = g.number("scale", s.galore.scale);
    g.finish();
  }
  if (r.has("lte")) {
    const auto l = r.object("lte");
    read_optimizer(l, "lte", s);
    s.layers.lte_rank = l.integer("rank", s.layers.lte_rank, 1);
    s.layers.lte_heads = l.integer("heads", s.layers.lte_heads, 1);
    s.layers.lte_alpha = l.number("alpha", s.layers.lte_alpha, 1e-12);
    s.layers.merge_steps = l.integer("merge_steps", s.layers.merge_steps, 1);
    l.finish();
  }
  if (r.has("lowrank")) {
    const auto l = r.object("lowrank");
    read_optimizer(l, "lowrank", s);
    s.layers.lowrank_rank = l.integer("rank", s.layers.lowrank_rank, 1);
    l.finish();
  }
  r.finish();
  return s;
}

// training.optimizer with the method's own keys laid over it.
void lay_optimizer(nlohmann::json& e, const Settings& settings, const std::string& method) {
  const auto it = settings.optimizer.find(method);
  if (it == settings.optimizer.end()) return;
  auto& training = e["training"];
  if (training.is_null()) training = nlohmann::json::object();
  auto& optimizer = training["optimizer"];
  if (optimizer.is_null()) optimizer = nlohmann::json::object();
  optimizer.update(it->second);
}

}  // namespace

const std::vector<std::string>& method_names() {
  static const std::vector<std::string> names{"dense", "tt", "galore", "lte", "lowrank"};
  return names;
}

nlohmann::json dense_build(nlohmann::json e) {
  const auto settings = read_settings(e);
  if (e.contains("method")) {
    const ConfigReader top(e, "");
    const auto method = top.choice("method", "", method_names());
    if (method != "tt" && method != "dense")
      throw Error("method " + method + " is a build of its own; the dense build is method dense "
                  "(leave out the method, or the request for the dense build)");
    e.erase("method");
  }
  if (!e.contains("model") || !e["model"].is_object())
    throw Error("the dense build rewrites the model section, but there is none (add \"model\")");
  e["model"] = model_kind_of(e["model"]).without_compression(e["model"]);
  if (e.contains("training") && e["training"].is_object()) {
    auto& training = e["training"];
    // No size to trade: max{L - L0, S - S0} is flat once the loss is below L0, which would
    // leave the dense baseline learning at rho times its rate.
    training.erase("late_stage");
    if (training.contains("init_from"))
      training["init_from"] = dense_checkpoint_path(training["init_from"].get<std::string>());
  }
  lay_optimizer(e, settings, "dense");
  return e;
}

nlohmann::json apply_method(nlohmann::json e) {
  if (!e.is_object()) return e;
  auto settings = read_settings(e);
  if (!e.contains("method")) return e;
  const ConfigReader top(e, "");
  const auto method = top.choice("method", "", method_names());
  settings.layers.method = method;
  if (!e.contains("model") || !e["model"].is_object())
    throw Error("method: " + method + " rewrites the model section, but there is none (add \"model\")");
  e["model"] = model_kind_of(e["model"]).apply_method(e["model"], settings.layers);
  auto& training = e["training"];
  if (training.is_null()) training = nlohmann::json::object();
  if (method != "tt") training.erase("late_stage");
  auto optimizer = training.value("optimizer", nlohmann::json::object());
  if (method == "galore") {
    optimizer = adam_keys(optimizer);
    optimizer.update({{"kind", "galore"}, {"rank", settings.galore.rank},
                      {"update_proj_gap", settings.galore.update_proj_gap}, {"scale", settings.galore.scale}});
  } else if (optimizer.value("kind", std::string("adamw")) == "galore") {
    optimizer = adam_keys(optimizer);
    optimizer["kind"] = "adamw";
  }
  if (!optimizer.empty()) training["optimizer"] = optimizer;
  lay_optimizer(e, settings, method);
  return e;
}

}  // namespace comera
