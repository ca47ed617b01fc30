#include "core/training/model_export.h"

#include "core/data/data_info.h"
#include "core/layers/size.h"
#include "core/layers/tt_linear.h"
#include "core/layers/ttm_linear.h"
#include "core/layers/ttm_embedding.h"
#include "core/models/model_kind.h"
#include "core/training/checkpoint.h"
#include "core/training/train_config.h"
#include "core/util/config_reader.h"

#include <ATen/ATen.h>
#include <ATen/core/Dict.h>
#include <ATen/core/List.h>
#include <torch/nn/module.h>
#include <torch/serialize.h>

namespace comera {

namespace {

using Dict = c10::impl::GenericDict;

Dict string_dict(const c10::TypePtr& value_type) { return Dict(c10::StringType::get(), value_type); }

c10::List<at::Tensor> tensor_list(const std::vector<at::Tensor>& tensors) {
  c10::List<at::Tensor> out;
  for (const auto& t : tensors) out.push_back(t.detach().clone());
  return out;
}

c10::List<int64_t> int_list(const std::vector<int64_t>& values) {
  return c10::List<int64_t>(values);
}

// One tensorized layer as a Python user needs it: the cores in chain order, the rank vectors
// with pruned entries already zeroed (W = G1 diag(d1) G2 diag(d2) ... Gk), ranks and modes.
Dict layer_entry(const Tensorized& layer, torch::nn::Module& module) {
  Dict entry = string_dict(c10::AnyType::get());
  entry.insert("kind", layer.layer_kind());
  entry.insert("cores", tensor_list(layer.cores()));
  std::vector<at::Tensor> masked;
  for (const auto& d : layer.rank_vectors()) masked.push_back(masked_rank_vector(d, layer.threshold()));
  entry.insert("rank_vectors", tensor_list(masked));
  entry.insert("ranks", int_list(layer.chain().ranks()));
  entry.insert("threshold", layer.threshold());
  if (auto* tt = dynamic_cast<TTLinearImpl*>(&module)) {
    entry.insert("in_modes", int_list(tt->options.in_modes()));
    entry.insert("out_modes", int_list(tt->options.out_modes()));
  } else if (auto* ttml = dynamic_cast<TTMLinearImpl*>(&module)) {
    entry.insert("in_modes", int_list(ttml->options.in_modes()));
    entry.insert("out_modes", int_list(ttml->options.out_modes()));
  } else if (auto* ttm = dynamic_cast<TTMEmbeddingImpl*>(&module)) {
    entry.insert("vocab", ttm->options.vocab());
    entry.insert("vocab_modes", int_list(ttm->options.vocab_modes()));
    entry.insert("emb_modes", int_list(ttm->options.emb_modes()));
  }
  return entry;
}

// The dense weights a tensorized layer stands for, under the dense twin's names: a TT linear
// layer's W (out, in) = (f(I) - b)^T, since f(x) = x W^T + b; a TTM table row by row.
void add_dense(c10::Dict<std::string, at::Tensor>& out, const std::string& name,
               torch::nn::Module& module) {
  if (auto* tt = dynamic_cast<TTLinearImpl*>(&module)) {
    const int64_t in = tt->shape().in_features();
    auto f = tt->forward(at::eye(in, tt->cores()[0].options()));
    if (tt->bias.defined()) {
      f = f - tt->bias;
      out.insert(name + ".bias", tt->bias.detach().clone());
    }
    out.insert(name + ".weight", f.t().contiguous());
  } else if (auto* ttml = dynamic_cast<TTMLinearImpl*>(&module)) {
    if (ttml->bias.defined()) out.insert(name + ".bias", ttml->bias.detach().clone());
    out.insert(name + ".weight", ttml->weight().detach().t().contiguous());
  } else if (auto* ttm = dynamic_cast<TTMEmbeddingImpl*>(&module)) {
    out.insert(name + ".weight", ttm->table().contiguous());
  }
}

bool under(const std::string& name, const std::vector<std::string>& prefixes) {
  for (const auto& p : prefixes)
    if (name.size() > p.size() && name.compare(0, p.size(), p) == 0 && name[p.size()] == '.' &&
        name.find('.', p.size() + 1) == std::string::npos)
      return true;
  return false;
}

}  // namespace

ModelExport export_model(const std::string& checkpoint_path, bool dense_weights) {
  const Checkpoint checkpoint(checkpoint_path, "give the checkpoint of a finished or stopped "
                                               "`comera train` run (see --checkpoint there)");
  const auto& identity = checkpoint.identity();
  const TaskSpec task_spec = read_task_spec(ConfigReader(identity.at("training"), "training"));
  const ModelSpec spec = parse_model_spec(identity.at("model"), task_spec);
  auto task = spec.build(task_spec, DataInfo{});
  auto& model = task->model();
  checkpoint.load_model(model);
  model.eval();
  at::NoGradGuard no_grad;

  ModelExport result;
  c10::Dict<std::string, at::Tensor> state;
  for (const auto& p : model.named_parameters(true)) state.insert(p.key(), p.value().detach().clone());
  for (const auto& b : model.named_buffers(true)) state.insert(b.key(), b.value().detach().clone());
  result.tensors = static_cast<int64_t>(state.size());
  result.parameters = model_size(model).total_params;

  Dict layers = string_dict(c10::AnyType::get());
  c10::Dict<std::string, at::Tensor> dense;
  std::vector<std::string> tensorized;
  for (const auto& m : model.named_modules("", false)) {
    auto* layer = dynamic_cast<Tensorized*>(m.value().get());
    if (!layer) continue;
    layers.insert(m.key(), layer_entry(*layer, *m.value()));
    tensorized.push_back(m.key());
    if (dense_weights) add_dense(dense, m.key(), *m.value());
  }
  result.tensorized_layers = static_cast<int64_t>(tensorized.size());

  Dict root = string_dict(c10::AnyType::get());
  root.insert("format", std::string("comera-export-1"));
  root.insert("config", identity.dump(2));
  root.insert("state_dict", state);
  root.insert("tensorized_layers", layers);
  if (dense_weights) {
    // Everything but the tensorized layers' own parameters carries over unchanged.
    for (const auto& entry : state)
      if (!under(entry.key(), tensorized)) dense.insert(entry.key(), entry.value());
    for (const auto& entry : dense) result.dense_parameters += entry.value().numel();
    root.insert("dense_config", spec.dense().to_json().dump(2));
    root.insert("dense_state_dict", dense);
  }
  result.bytes = torch::pickle_save(root);
  return result;
}

}  // namespace comera
