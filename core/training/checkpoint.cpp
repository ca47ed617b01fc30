#include "core/training/checkpoint.h"

#include "core/models/model_kind.h"
#include "core/training/rank_truncation.h"
#include "core/util/error.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>

namespace comera {

namespace {

constexpr const char* kFormat = "comera-checkpoint-1";

std::string read_string(torch::serialize::InputArchive& archive, const std::string& key) {
  c10::IValue v;
  archive.read(key, v);
  return v.toStringRef();
}

// The tensor at a dotted module path ("encoder0.attention.query.core0") of a Module::save
// archive, where each submodule is a nested archive.
bool read_nested(torch::serialize::InputArchive& archive, const std::string& name, at::Tensor& out,
                 bool is_buffer) {
  const auto dot = name.find('.');
  if (dot == std::string::npos) return archive.try_read(name, out, is_buffer);
  torch::serialize::InputArchive child;
  return archive.try_read(name.substr(0, dot), child) &&
         read_nested(child, name.substr(dot + 1), out, is_buffer);
}

// Written to a temporary file beside `path` and renamed over it.
void write_atomically(const std::string& path, const std::function<void(const std::string&)>& write) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  // Unique per process and call: two writers never share a temporary file.
  static std::atomic<int64_t> counter{0};
  const std::string tmp = path + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  try {
    write(tmp);
    std::filesystem::rename(tmp, path);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw;
  }
}

}  // namespace

nlohmann::json TrainerState::to_json() const {
  nlohmann::json j = {{"epoch", epoch}, {"step", step}, {"step_in_epoch", step_in_epoch}, {"late", late},
          {"size_scale", size_scale}, {"initial_size", initial_size}, {"size_target", size_target},
          {"loss_sum", loss_sum}, {"step_seconds", step_seconds}, {"examples", examples},
          {"correct", correct}, {"tokens", tokens}, {"steps", steps}, {"elapsed_s", elapsed_s}};
  if (!late_cuts.is_null()) j["late_cuts"] = late_cuts;
  return j;
}

TrainerState TrainerState::from_json(const nlohmann::json& j) {
  TrainerState s;
  s.epoch = j.at("epoch");
  s.step = j.at("step");
  s.step_in_epoch = j.at("step_in_epoch");
  s.late = j.at("late");
  s.size_scale = j.at("size_scale");
  s.initial_size = j.at("initial_size");
  s.size_target = j.at("size_target");
  s.loss_sum = j.at("loss_sum");
  s.step_seconds = j.at("step_seconds");
  s.examples = j.at("examples");
  s.correct = j.at("correct");
  s.tokens = j.at("tokens");
  s.steps = j.at("steps");
  s.late_cuts = j.value("late_cuts", nlohmann::json());
  s.elapsed_s = j.value("elapsed_s", 0.0);  // checkpoints from before it was kept: 0
  return s;
}

void save_checkpoint(const std::string& path, torch::nn::Module& model,
                     torch::optim::Optimizer& optimizer, const TrainerState& state,
                     const nlohmann::json& identity, const at::Generator& generator) {
  torch::serialize::OutputArchive root, model_archive, optimizer_archive;
  model.save(model_archive);
  optimizer.save(optimizer_archive);
  root.write("format", c10::IValue(std::string(kFormat)));
  root.write("model", model_archive);
  root.write("optimizer", optimizer_archive);
  root.write("ranks", c10::IValue(nlohmann::json(allocated_ranks(model)).dump()));
  root.write("state", c10::IValue(state.to_json().dump()));
  root.write("identity", c10::IValue(identity.dump()));
  root.write("rng", generator.get_state());
  write_atomically(path, [&root](const std::string& tmp) { root.save_to(tmp); });
}

void copy_checkpoint(const std::string& from, const std::string& to) {
  write_atomically(to, [&from](const std::string& tmp) { std::filesystem::copy_file(from, tmp); });
}

std::string dense_checkpoint_path(const std::string& path) {
  const std::filesystem::path p(path);
  return (p.parent_path() / (p.stem().string() + "_dense" + p.extension().string())).string();
}

Checkpoint::Checkpoint(const std::string& path, const std::string& fix, const c10::Device& device)
    : path_(path), archive_(std::make_shared<torch::serialize::InputArchive>()) {
  if (!std::filesystem::exists(path)) throw Error("checkpoint " + path + " does not exist (" + fix + ")");
  try {
    archive_->load_from(path, device);
    if (read_string(*archive_, "format") != kFormat) throw Error("unknown format");
    state_ = TrainerState::from_json(nlohmann::json::parse(read_string(*archive_, "state")));
    identity_ = nlohmann::json::parse(read_string(*archive_, "identity"));
    ranks_ = nlohmann::json::parse(read_string(*archive_, "ranks"))
                 .get<std::map<std::string, std::vector<int64_t>>>();
  } catch (const std::exception& e) {
    throw Error("checkpoint " + path + " cannot be read (" + error_message(e) + "); " + fix);
  }
}

void Checkpoint::load_model(torch::nn::Module& model) const {
  restore_ranks(model, ranks_);
  torch::serialize::InputArchive model_archive;
  archive_->read("model", model_archive);
  model.load(model_archive);
}

int64_t Checkpoint::init_model(torch::nn::Module& model, const ModelSpec& spec,
                               const std::function<bool(const std::string&)>& is_head) const {
  auto theirs = identity_.value("model", nlohmann::json::object());
  // Checkpoints from before model kinds existed hold a transformer.
  const std::string their_kind = theirs.value("kind", "transformer");
  theirs.erase("kind");
  const auto& kind = spec.model_kind();
  if (their_kind != spec.kind || kind.body(theirs) != kind.body(spec.settings))
    throw Error("checkpoint " + path_ + " was made with other model settings than this run's (" +
                "only the heads and dropout may differ): its model is a " + their_kind + " with " +
                theirs.dump() + "; initialise from a checkpoint of the same architecture (dense with --dense)");
  std::map<std::string, std::vector<int64_t>> body_ranks;
  for (const auto& [name, ranks] : ranks_)
    if (!is_head(name)) body_ranks.emplace(name, ranks);
  restore_ranks(model, body_ranks, false);
  torch::serialize::InputArchive model_archive;
  archive_->read("model", model_archive);
  at::NoGradGuard no_grad;
  int64_t loaded = 0;
  auto load = [&](const std::string& name, at::Tensor& target, bool is_buffer) {
    if (is_head(name)) return;
    at::Tensor value;
    if (!read_nested(model_archive, name, value, is_buffer) || value.sizes() != target.sizes())
      throw Error("checkpoint " + path_ + " has no " + (is_buffer ? "buffer " : "parameter ") + name +
                  " of shape " + c10::str(target.sizes()) +
                  " (initialise from a checkpoint of the same architecture)");
    target.copy_(value);
    ++loaded;
  };
  for (auto& p : model.named_parameters()) load(p.key(), p.value(), false);
  for (auto& b : model.named_buffers()) load(b.key(), b.value(), true);
  return loaded;
}

void Checkpoint::load_optimizer(torch::optim::Optimizer& optimizer) const {
  torch::serialize::InputArchive optimizer_archive;
  archive_->read("optimizer", optimizer_archive);
  optimizer.load(optimizer_archive);
}

void Checkpoint::restore_rng(at::Generator& generator) const {
  at::Tensor state;
  archive_->read("rng", state);
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state.to(at::kCPU));  // read onto the run's device, which may be a GPU
}

}  // namespace comera
