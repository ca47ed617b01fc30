#include "core/models/model_kind.h"

#include "core/models/dlrm_kind.h"
#include "core/models/transformer_kind.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace comera {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const ModelKind>> kinds;
};

// Built-in kinds are listed here rather than registered by static objects, which the linker
// drops from a static library when nothing else refers to their file.
Registry& registry() {
  static Registry* r = [] {
    auto* out = new Registry;
    for (auto kind : {transformer_kind(), dlrm_kind()}) out->kinds.emplace(kind->name(), std::move(kind));
    return out;
  }();
  return *r;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

void register_model_kind(std::shared_ptr<const ModelKind> kind) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto name = kind->name();
  if (!r.kinds.emplace(name, std::move(kind)).second)
    throw Error("model kind '" + name + "' is registered already");
}

const ModelKind& find_model_kind(const std::string& name) {
  auto& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto it = r.kinds.find(name);
    if (it != r.kinds.end()) return *it->second;
  }
  throw Error("unknown model kind '" + name + "' (known: " + joined(model_kind_names()) + ")");
}

std::vector<std::string> model_kind_names() {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& item : r.kinds) names.push_back(item.first);
  return names;
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
                "' (it can be: " + joined(tasks) + ")");
  spec.settings = kind->read(r, task);
  return spec;
}

ModelSpec parse_model_spec(const nlohmann::json& model, const TaskSpec& task) {
  return read_model_spec(ConfigReader(model, "model"), task);
}

}  // namespace comera
