#include "core/models/model_kind.h"

#include "core/models/dlrm_kind.h"
#include "core/models/transformer_kind.h"
#include "core/util/comma_list.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "core/util/registry.h"

#include <algorithm>

namespace comera {

namespace {

// Built-in kinds are listed here rather than registered by static objects, which the linker
// drops from a static library when nothing else refers to their file.
Registry<ModelKind>& registry() {
  static Registry<ModelKind> r("model kind", {transformer_kind(), dlrm_kind()});
  return r;
}

}  // namespace

void register_model_kind(std::shared_ptr<const ModelKind> kind) { registry().add(std::move(kind)); }

const ModelKind& find_model_kind(const std::string& name) { return registry().find(name); }

std::vector<std::string> model_kind_names() { return registry().names(); }

nlohmann::json ModelKind::apply_method(nlohmann::json model, const MethodRequest& request) const {
  (void)model;
  throw Error("method: " + request.method + ": a " + name() + " model has no baseline methods (drop \"method\" "
              "and configure the model directly)");
}

nlohmann::json ModelKind::without_compression(nlohmann::json model) const {
  model.erase("tensorized");
  return model;
}

bool ModelKind::compressed(const nlohmann::json& model) const {
  return !model.value("tensorized", nlohmann::json::object()).empty();
}

nlohmann::json ModelKind::cap_ranks(nlohmann::json model, int64_t cap) const {
  if (!model.contains("tensorized")) return model;
  for (auto& item : model["tensorized"].items()) {
    auto& ranks = item.value()["ranks"];
    if (ranks.is_number_integer())
      ranks = std::min(ranks.get<int64_t>(), cap);
    else
      for (auto& x : ranks) x = std::min(x.get<int64_t>(), cap);
  }
  return model;
}

const ModelKind& model_kind_of(const nlohmann::json& model) {
  const auto kind = model.is_object() ? model.value("kind", std::string("transformer")) : "transformer";
  try {
    return find_model_kind(kind);
  } catch (const Error& e) {
    throw Error(std::string("model.kind: ") + e.what());
  }
}

ModelSpec ModelSpec::dense() const { return {kind, model_kind().dense(settings)}; }

nlohmann::json ModelSpec::to_json() const {
  auto j = settings;
  j["kind"] = kind;
  return j;
}

ModelSpec read_model_spec(const ConfigReader& r, const TaskSpec& task) {
  ModelSpec spec;
  spec.kind = r.string("kind", spec.kind);
  const ModelKind* kind = nullptr;
  try {
    kind = &find_model_kind(spec.kind);
  } catch (const Error& e) {
    throw Error(r.key_path("kind") + ": " + e.what());
  }
  const auto tasks = kind->tasks();
  if (std::find(tasks.begin(), tasks.end(), task.kind) == tasks.end())
    throw Error("training.task: a " + spec.kind + " model is not trained for '" + task.kind +
                "' (it can be: " + join_names(tasks) + ")");
  spec.settings = kind->read(r, task);
  return spec;
}

ModelSpec parse_model_spec(const nlohmann::json& model, const TaskSpec& task) {
  return read_model_spec(ConfigReader(model, "model"), task);
}

}  // namespace comera
