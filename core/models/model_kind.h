#pragma once
// The model kinds an experiment's `model.kind` names (the transformer built in, the DLRM and
// others added the same way, a test's toy kind registered at run time): each reads and
// validates its own settings and builds a model bound to a task.
#include "core/data/data_info.h"
#include "core/models/method_request.h"
#include "core/models/task.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace comera {

class ConfigReader;

class ModelKind {
 public:
  virtual ~ModelKind() = default;
  virtual std::string name() const = 0;
  // The tasks it can be trained for (training.task).
  virtual std::vector<std::string> tasks() const = 0;
  // What evaluation reports for `task` beyond loss and accuracy (EvalResult::metrics), e.g.
  // "auc" for a binary task: objectives a sweep of this kind may have.
  virtual std::vector<std::string> eval_metrics(const TaskSpec& task) const {
    (void)task;
    return {};
  }
  // Validates the model section (its "kind" already read) for `task` and returns it complete,
  // defaults filled in. Errors name the key and the fix.
  virtual nlohmann::json read(const ConfigReader& model, const TaskSpec& task) const = 0;
  // The same architecture with every layer dense.
  virtual nlohmann::json dense(const nlohmann::json& settings) const = 0;
  // What a run initialised from a checkpoint must share with it (all but heads and dropout).
  virtual nlohmann::json body(const nlohmann::json& settings) const = 0;
  // One line for the user, e.g. "6 layers, d_model 768".
  virtual std::string summary(const nlohmann::json& settings) const = 0;
  // The tensorized layers re-factorised into d balanced modes per side, interior ranks kept
  // (capped at their bounds): a sweep's shape axis. Returns the new "tensorized" section.
  virtual nlohmann::json factorise(const nlohmann::json& settings, int d) const = 0;
  // The following work on the model section as written (before read(), "kind" included), so
  // that sweeps and methods patch it and store what the user would have written.
  // `request.method` carried out: its layers replaced or made dense. A kind without baselines
  // refuses (the default).
  virtual nlohmann::json apply_method(nlohmann::json model, const MethodRequest& request) const;
  // The defaults below read the section "tensorized" (an entry per layer with its "ranks"),
  // which the built-in kinds share.
  // Every compressed layer dense: a sweep's dense baseline.
  virtual nlohmann::json without_compression(nlohmann::json model) const;
  // Whether it has compressed layers.
  virtual bool compressed(const nlohmann::json& model) const;
  // Every interior rank of its compressed layers capped at `cap` (a sweep's rank axis).
  virtual nlohmann::json cap_ranks(nlohmann::json model, int64_t cap) const;
  // An error naming the setting that rules out data-parallel training, if one does.
  virtual void check_data_parallel(const nlohmann::json& settings) const { (void)settings; }
  // A freshly initialised model bound to `task`, from the global CPU generator. Data it cannot
  // read (a vocabulary larger than the model's) is an error naming the fix.
  virtual std::unique_ptr<Task> build(const nlohmann::json& settings, const TaskSpec& task,
                                      const DataInfo& data) const = 0;
};

// Adds a kind (a name already taken is an error).
void register_model_kind(std::shared_ptr<const ModelKind> kind);
// Throws comera::Error listing the known kinds.
const ModelKind& find_model_kind(const std::string& name);
std::vector<std::string> model_kind_names();

// The model section of an experiment: its kind and complete settings.
struct ModelSpec {
  std::string kind = "transformer";
  nlohmann::json settings = nlohmann::json::object();

  const ModelKind& model_kind() const { return find_model_kind(kind); }
  ModelSpec dense() const;
  std::string summary() const { return model_kind().summary(settings); }
  std::unique_ptr<Task> build(const TaskSpec& task, const DataInfo& data) const {
    return model_kind().build(settings, task, data);
  }
  // The settings with "kind" added.
  nlohmann::json to_json() const;
};

// The kind of a model section as written ("kind" defaults to "transformer"); errors name
// model.kind.
const ModelKind& model_kind_of(const nlohmann::json& model);

// Reads `model` (kind defaults to "transformer"); the task must be one the kind supports.
ModelSpec read_model_spec(const ConfigReader& model, const TaskSpec& task);
ModelSpec parse_model_spec(const nlohmann::json& model, const TaskSpec& task = {});

}  // namespace comera
