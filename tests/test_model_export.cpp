// `comera export-model`: the exported dictionary loads back (torch::pickle_load, the reader of
// torch.save's format) into the tensorized model and, with dense weights, into its dense twin,
// both giving the checkpoint's outputs; the cores and rank vectors contract by hand to the dense
// weights.
#include "core/layers/tensorized.h"
#include "core/models/model_kind.h"
#include "core/training/checkpoint.h"
#include "core/training/model_export.h"
#include "core/training/optimizer.h"
#include "core/training/rank_truncation.h"
#include "core/training/train_config.h"
#include "core/util/error.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Dict.h>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize.h>

#include <fstream>

using namespace comera;
using Catch::Matchers::Contains;

namespace {

nlohmann::json tiny_model_json() {
  return {{"kind", "transformer"}, {"vocab", 50}, {"d_model", 8}, {"heads", 2}, {"layers", 1},
          {"ffn", 16}, {"max_positions", 16}, {"classes", 3}, {"dropout", 0.1},
          {"tensorized",
           {{"embedding", {{"vocab_modes", {4, 4, 4}}, {"emb_modes", {2, 2, 2}}, {"ranks", 3}}},
            {"attention", {{"in_modes", {4, 2}}, {"out_modes", {2, 4}}, {"ranks", 3}}},
            {"ffn_in", {{"in_modes", {4, 2}}, {"out_modes", {4, 4}}, {"ranks", 3}}},
            {"ffn_out", {{"format", "ttm"}, {"in_modes", {4, 4}}, {"out_modes", {2, 4}}, {"ranks", 3}}}}}};
}

// The task's loss on a fixed batch in eval mode: what the model computes, end to end.
double loss_on(Task& task, const Batch& batch) {
  task.model().eval();
  at::NoGradGuard no_grad;
  return task.forward(batch).loss.item<double>();
}

// A checkpoint of a model whose rank vectors were perturbed and truncated, so the export has
// uneven ranks and pruned entries to carry.
std::string make_checkpoint(const std::string& path, const ModelSpec& spec) {
  at::manual_seed(3);
  auto task = spec.build(TaskSpec{}, DataInfo{});
  auto& model = task->model();
  {
    at::NoGradGuard no_grad;
    for (auto& p : model.named_parameters())
      if (p.key().find(".rank") != std::string::npos) p.value().uniform_(-1, 1);
  }
  TrainConfig training;
  auto optimizer = make_optimizer(model, training.optimizer);
  truncate_model(model, optimizer.get(), false);
  save_checkpoint(path, model, *optimizer, TrainerState{},
                  {{"model", spec.to_json()}, {"training", training.to_json()}},
                  at::make_generator<at::CPUGeneratorImpl>(0));
  return path;
}

std::map<std::string, at::Tensor> tensors_of(const c10::IValue& dict) {
  std::map<std::string, at::Tensor> out;
  for (const auto& e : dict.toGenericDict()) out[e.key().toStringRef()] = e.value().toTensor();
  return out;
}

// Loads `tensors` into every parameter and buffer of `model` by name: each must be there with
// its shape, and nothing else may be.
void load_exact(torch::nn::Module& model, const std::map<std::string, at::Tensor>& tensors) {
  at::NoGradGuard no_grad;
  size_t used = 0;
  auto take = [&](const std::string& name, at::Tensor& target) {
    INFO(name);
    const auto it = tensors.find(name);
    REQUIRE(it != tensors.end());
    REQUIRE(it->second.sizes() == target.sizes());
    target.copy_(it->second);
    ++used;
  };
  for (auto& p : model.named_parameters(true)) take(p.key(), p.value());
  for (auto& b : model.named_buffers(true)) take(b.key(), b.value());
  CHECK(used == tensors.size());
}

}  // namespace

TEST_CASE("an exported model loads back and computes what the checkpoint computes",
          "[model_export]") {
  comera::testing::TempDir dir;
  const ModelSpec spec = parse_model_spec(tiny_model_json());
  const auto checkpoint = make_checkpoint(dir.file("run.pt"), spec);

  // The reference: the checkpoint loaded the way a resumed run loads it.
  auto reference = spec.build(TaskSpec{}, DataInfo{});
  Checkpoint(checkpoint).load_model(reference->model());
  at::Generator gen = at::detail::createCPUGenerator(5);
  const Batch batch = reference->synthetic_batch(4, 12, gen);
  const double expected = loss_on(*reference, batch);

  const auto exported = export_model(checkpoint, true);
  const c10::IValue root = torch::pickle_load(exported.bytes);
  const auto dict = root.toGenericDict();
  CHECK(dict.at("format").toStringRef() == "comera-export-1");
  CHECK(nlohmann::json::parse(dict.at("config").toStringRef())["model"] == spec.to_json());

  SECTION("the state dict and the layers' ranks rebuild the tensorized model") {
    std::map<std::string, std::vector<int64_t>> ranks;
    const auto layers = dict.at("tensorized_layers").toGenericDict();
    for (const auto& e : layers)
      ranks[e.key().toStringRef()] = e.value().toGenericDict().at("ranks").toIntVector();
    CHECK(layers.size() == 7);  // the word embedding, q, k, v, o, ffn_in, ffn_out
    auto rebuilt = spec.build(TaskSpec{}, DataInfo{});
    restore_ranks(rebuilt->model(), ranks);
    load_exact(rebuilt->model(), tensors_of(dict.at("state_dict")));
    CHECK(loss_on(*rebuilt, batch) == Approx(expected).epsilon(1e-6));
  }

  SECTION("the dense weights load into the dense twin and give the same outputs") {
    const ModelSpec dense = parse_model_spec(nlohmann::json::parse(dict.at("dense_config").toStringRef()));
    CHECK(dense.to_json() == spec.dense().to_json());
    auto twin = dense.build(TaskSpec{}, DataInfo{});
    load_exact(twin->model(), tensors_of(dict.at("dense_state_dict")));
    CHECK(loss_on(*twin, batch) == Approx(expected).epsilon(1e-5));
  }

  SECTION("cores and masked rank vectors contract by hand to the dense weight") {
    const auto dense = tensors_of(dict.at("dense_state_dict"));
    const auto layer = dict.at("tensorized_layers").toGenericDict().at("encoder0.ffn_in").toGenericDict();
    const auto cores = layer.at("cores").toTensorVector();
    const auto d = layer.at("rank_vectors").toTensorVector();
    REQUIRE(cores.size() == 4);
    REQUIRE(d.size() == 3);
    // Chain: (1, s1, r1) diag(d1) (r1, s2, r2) ... -> (s1 s2 s3 s4), in modes first.
    at::Tensor full = cores[0].to(at::kDouble).reshape({-1, cores[0].size(2)});
    for (size_t k = 1; k < cores.size(); ++k) {
      full = full * d[k - 1].to(at::kDouble);
      full = at::matmul(full, cores[k].to(at::kDouble).reshape({cores[k].size(0), -1}))
                 .reshape({-1, cores[k].size(2)});
    }
    const auto w_t = full.reshape({8, 16});  // (in, out)
    CHECK(at::allclose(w_t.t(), dense.at("encoder0.ffn_in.weight").to(at::kDouble), 1e-5, 1e-6));

    // The TTM layer: (1, n1, m1, r1) diag(d1) (r1, n2, m2, 1) -> (n1, m1, n2, m2) -> (n1 n2, m1 m2).
    const auto ttm = dict.at("tensorized_layers").toGenericDict().at("encoder0.ffn_out").toGenericDict();
    CHECK(ttm.at("kind").toStringRef() == "ttm_linear");
    const auto g = ttm.at("cores").toTensorVector();
    const auto e = ttm.at("rank_vectors").toTensorVector();
    REQUIRE(g.size() == 2);
    const auto w = at::einsum("aimr,r,rjnb->ijmn", {g[0].to(at::kDouble), e[0].to(at::kDouble), g[1].to(at::kDouble)})
                       .reshape({16, 8});
    CHECK(at::allclose(w.t(), dense.at("encoder0.ffn_out.weight").to(at::kDouble), 1e-5, 1e-6));
  }
}

TEST_CASE("comera export-model writes the file and refuses to overwrite its input",
          "[model_export][cli]") {
  comera::testing::TempDir dir;
  const auto checkpoint = make_checkpoint(dir.file("run.pt"), parse_model_spec(tiny_model_json()));
  const auto r = comera::testing::run_cli("export-model " + checkpoint + " -o " + dir.file("m.pt") +
                                          " --json");
  CHECK(r.status == 0);
  const auto summary = nlohmann::json::parse(r.output);
  CHECK(summary["tensorized_layers"] == 7);
  CHECK(summary["dense_parameters"] == 0);
  CHECK(torch::pickle_load([&] {
          std::ifstream in(dir.file("m.pt"), std::ios::binary);
          return std::vector<char>(std::istreambuf_iterator<char>(in), {});
        }())
            .toGenericDict()
            .contains("state_dict"));
  const auto same = comera::testing::run_cli("export-model " + checkpoint + " -o " + checkpoint);
  CHECK(same.status != 0);
  CHECK_THAT(same.output, Contains(checkpoint));
  const auto missing = comera::testing::run_cli("export-model " + dir.file("none.pt") + " -o " +
                                                dir.file("x.pt"));
  CHECK(missing.status != 0);
  CHECK_THAT(missing.output, Contains("none.pt"));
}
