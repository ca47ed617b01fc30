// The DLRM: dot interaction against a hand-written loop, the model's shapes and layers against
// the reference's (facebookresearch/dlrm), its config's errors, its task's loss against BCE by
// hand, and both DLRM presets loaded, expanded and (the small one) built.
#include "core/data/criteo.h"
#include "core/layers/size.h"
#include "core/layers/ttm_embedding_bag.h"
#include "core/models/dlrm.h"
#include "core/models/model_kind.h"
#include "core/training/experiment.h"
#include "core/training/optimizer.h"
#include "core/util/error.h"
#include "core/util/precision.h"
#include "core/util/source_dir.h"
#include "tests/support/catch.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <torch/nn/modules/embedding.h>
#include <torch/optim/optimizer.h>

#include <cmath>
#include <map>

using namespace comera;
using Catch::Matchers::Contains;

namespace {

std::string preset(const std::string& name) {
  return comera::source_dir() + "/experiments/" + name;
}

nlohmann::json tiny_dlrm() {
  return {{"kind", "dlrm"},       {"dense_features", 3},        {"embedding_dim", 4},
          {"bottom_mlp", {8, 4}}, {"top_mlp", {6, 1}},          {"table_sizes", {5, 30, 7}},
          {"tensorized", {{"tables", {{"min_rows", 20}, {"cores", 2}, {"ranks", 3}}}}}};
}

TaskSpec ctr() {
  TaskSpec t;
  t.kind = "ctr";
  return t;
}

}  // namespace

TEST_CASE("dot interaction is the strictly lower triangle of T·Tᵀ, row-major", "[dlrm]") {
  const auto t = at::randn({3, 5, 4}, at::kDouble);
  const auto out = dot_interaction(t);
  REQUIRE(out.sizes() == at::IntArrayRef({3, 10}));
  for (int64_t b = 0; b < 3; ++b) {
    int64_t k = 0;
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < i; ++j, ++k) {
        double dot = 0;
        for (int64_t d = 0; d < 4; ++d) dot += t[b][i][d].item<double>() * t[b][j][d].item<double>();
        CHECK(std::abs(out[b][k].item<double>() - dot) < 1e-12);
      }
  }
  // The reference's 27 vectors: 351 products.
  CHECK(dot_interaction(at::randn({2, 27, 16})).size(1) == 351);
}

TEST_CASE("the Kaggle DLRM has the reference's layers and its TT tables compress 99x", "[dlrm]") {
  const auto e = load_experiment(preset("dlrm_criteo_kaggle.json"));
  REQUIRE(e.model.kind == "dlrm");
  const auto c = parse_dlrm_config(e.model.settings);
  CHECK(c.table_sizes == criteo_kaggle_table_sizes());
  CHECK(c.interaction_width() == 367);
  const auto layers = c.mlp_layers();
  REQUIRE(layers.size() == 7);
  CHECK((layers[0].in == 13 && layers[0].out == 512 && layers[3].out == 16));
  CHECK((layers[4].name == "top0" && layers[4].in == 367 && layers[6].out == 1));
  int64_t dense_rows = 0;
  for (const auto rows : c.table_sizes) dense_rows += rows;
  CHECK(dense_rows == 33762577);
  CHECK(e.data.format == "criteo");
  CHECK(e.data.settings["criteo"]["split"] == "days");
  CHECK(e.training.task.kind == "ctr");
  // Built with its TT tables only (the dense ones are small): the size the paper compares.
  Dlrm model(c);
  const auto size = model_size(*model);
  CHECK(size.dense_model_params > 540000000);
  CHECK(size.compression() >= 99);
  // Dense, the same config has no TT layer.
  const auto dense = parse_dlrm_config(e.model.dense().settings);
  CHECK(dense.tables.min_rows == 0);
  CHECK(dense.tt_mlp.empty());
}

TEST_CASE("the small synthetic DLRM preset loads, builds and runs a step's forward", "[dlrm]") {
  const auto e = load_experiment(preset("small_dlrm_synthetic.json"));
  REQUIRE(e.model.kind == "dlrm");
  const auto c = parse_dlrm_config(e.model.settings);
  CHECK(c.table_sizes == e.data.settings["criteo"]["table_sizes"].get<std::vector<int64_t>>());
  DataInfo info;
  info.dense_features = 13;
  info.table_sizes = e.data.settings["criteo"]["table_sizes"].get<std::vector<int64_t>>();
  const auto task = e.model.build(e.training.task, info);
  const auto gen = at::detail::getDefaultCPUGenerator();
  const auto batch = task->synthetic_batch(32, 0, gen);
  const auto out = task->forward(batch);
  CHECK(out.loss.dim() == 0);
  CHECK(out.scores.size(0) == 32);
  int64_t ttm = 0;
  for (const auto& m : task->model().modules()) ttm += dynamic_cast<TTMEmbeddingBagImpl*>(m.get()) != nullptr;
  CHECK(ttm == 5);
  // In bf16 (MLPs and interaction through autocast, TTM bags pooled in float32) the same loss
  // within bf16 rounding, as a float32 value with float32 gradients.
  const auto bf16 = [&] {
    const ForwardPrecision scope(Precision::Bf16);
    return task->forward(batch);
  }();
  REQUIRE(bf16.scores.scalar_type() == at::kBFloat16);
  const double loss32 = out.loss.item<double>(), loss16 = float_activation(bf16.loss).item<double>();
  INFO("loss fp32 " << loss32 << ", bf16 " << loss16);
  CHECK(std::abs(loss16 - loss32) < 0.02 * loss32);
  CHECK(loss16 != loss32);
  float_activation(bf16.loss).backward();
  for (const auto& p : task->model().parameters())
    if (p.grad().defined()) CHECK(p.grad().scalar_type() == at::kFloat);
}

TEST_CASE("the DLRM task's loss is BCE of the sigmoid, its lookups the tables' rows", "[dlrm]") {
  const auto spec = parse_model_spec(tiny_dlrm(), ctr());
  at::manual_seed(1);
  const auto task = spec.build(ctr(), {});
  Batch b(4);
  b.set("dense", at::rand({4, 3}));
  b.set("sparse", at::tensor({0, 29, 6, 4, 0, 0, 2, 17, 3, 1, 5, 1}, at::kLong).view({4, 3}));
  b.set("labels", at::tensor({1.0f, 0.0f, 0.0f, 1.0f}));
  const auto out = task->forward(b);
  const auto p = out.scores.to(at::kDouble);
  const auto y = b.at("labels").to(at::kDouble);
  const double bce = -(y * p.log() + (1 - y) * (1 - p).log()).mean().item<double>();
  CHECK(std::abs(out.loss.item<double>() - bce) < 1e-5);
  CHECK(out.predictions == 4);
  // Table 1 (30 rows >= 20) is a TTM bag, the others dense EmbeddingBags.
  auto& net = task->model();
  CHECK(net.named_children()["table1"]->as<TTMEmbeddingBagImpl>() != nullptr);
  CHECK(net.named_children()["table0"]->as<torch::nn::EmbeddingBagImpl>() != nullptr);
  CHECK(model_size(net).layers.size() == 1);
  const auto rows = spec.model_kind().factorise(spec.settings, 3);
  CHECK(rows.at("tables").at("cores") == 3);
}

TEST_CASE("sparse gradients of dense tables hold the dense gradient's rows", "[dlrm]") {
  auto j = tiny_dlrm();
  Batch b(4);
  b.set("dense", at::rand({4, 3}));
  b.set("sparse", at::tensor({0, 29, 6, 4, 0, 0, 2, 17, 3, 4, 5, 1}, at::kLong).view({4, 3}));
  b.set("labels", at::tensor({1.0f, 0.0f, 0.0f, 1.0f}));
  auto gradient = [&](bool sparse) {
    j["sparse_gradients"] = sparse;
    const auto spec = parse_model_spec(j, ctr());
    CHECK(spec.settings.contains("sparse_gradients") == sparse);
    CHECK(parse_dlrm_config(spec.dense().settings).sparse_gradients == sparse);
    at::manual_seed(4);
    const auto task = spec.build(ctr(), {});
    task->forward(b).loss.backward();
    return task->model().named_parameters()["table0.weight"].grad();
  };
  const auto dense = gradient(false), sparse = gradient(true);
  CHECK_FALSE(dense.is_sparse());
  REQUIRE(sparse.is_sparse());
  CHECK(at::allclose(sparse.to_dense(), dense, 1e-6, 1e-7));
  // Rows 1 and 3 of table 0 are not looked up: the sparse gradient holds only 0, 2 and 4.
  CHECK(std::get<0>(at::_unique(sparse.coalesce().indices().flatten())).numel() == 3);
  CHECK(dense[1].abs().sum().item<double>() + dense[3].abs().sum().item<double>() == 0);
}

TEST_CASE("Adagrad steps with sparse table gradients equal those with dense ones", "[dlrm]") {
  // The Kaggle preset trains with Adagrad and sparse gradients; rows not looked up must stay as
  // they are and the rest move as under a dense gradient (zero rows change no accumulator).
  auto j = tiny_dlrm();
  OptimizerConfig adagrad;
  adagrad.kind = "adagrad";
  adagrad.lr_cores = 0.03;
  adagrad.lr_other = 0.05;
  auto train = [&](bool sparse) {
    j["sparse_gradients"] = sparse;
    const auto spec = parse_model_spec(j, ctr());
    at::manual_seed(4);
    const auto task = spec.build(ctr(), {});
    const auto optimizer = make_optimizer(task->model(), adagrad);
    at::manual_seed(5);
    for (int step = 0; step < 3; ++step) {
      Batch b(4);
      b.set("dense", at::rand({4, 3}));
      b.set("sparse", at::randint(0, 5, {4, 3}, at::kLong));
      b.set("labels", at::randint(0, 2, {4}).to(at::kFloat));
      optimizer->zero_grad();
      task->forward(b).loss.backward();
      optimizer->step();
    }
    std::map<std::string, at::Tensor> params;
    for (const auto& p : task->model().named_parameters()) params[p.key()] = p.value().detach().clone();
    return params;
  };
  const auto dense = train(false), sparse = train(true);
  REQUIRE(dense.size() == sparse.size());
  for (const auto& [name, value] : dense) {
    INFO(name);
    CHECK(at::allclose(sparse.at(name), value, 1e-5, 1e-6));
  }
}

TEST_CASE("bad DLRM configs and mismatched data are errors naming the key", "[dlrm]") {
  auto with = [](auto edit) {
    auto j = tiny_dlrm();
    edit(j);
    return j;
  };
  CHECK_THROWS_WITH(parse_model_spec(with([](auto& j) { j["bottom_mlp"] = {8, 5}; }), ctr()),
                    Contains("model.bottom_mlp") && Contains("embedding_dim (4)"));
  CHECK_THROWS_WITH(parse_model_spec(with([](auto& j) { j["top_mlp"] = {6, 2}; }), ctr()),
                    Contains("model.top_mlp"));
  CHECK_THROWS_WITH(parse_model_spec(with([](auto& j) { j["tensorized"]["top9"] = nlohmann::json::object(); }), ctr()),
                    Contains("model.tensorized.top9: unknown key"));
  CHECK_THROWS_WITH(parse_model_spec(tiny_dlrm(), TaskSpec{}), Contains("not trained for 'classification'"));
  const auto spec = parse_model_spec(tiny_dlrm(), ctr());
  DataInfo info;
  info.dense_features = 13;
  CHECK_THROWS_WITH(spec.build(ctr(), info), Contains("model.dense_features"));
  info.dense_features = 3;
  info.table_sizes = {5, 31, 7};
  CHECK_THROWS_WITH(spec.build(ctr(), info), Contains("model.table_sizes[1]"));
  info.table_sizes = {5, 30};
  CHECK_THROWS_WITH(spec.build(ctr(), info), Contains("3 tables but the data has 2"));
  // A TT top layer, its modes checked against the interaction's width: 4 + 6 = 10 inputs here.
  CHECK_THROWS_WITH(parse_model_spec(with([](auto& j) {
                      j["tensorized"]["top0"] = {{"in_modes", {3, 3}}, {"out_modes", {2, 3}}, {"ranks", 2}};
                    }), ctr()),
                    Contains("model.tensorized.top0"));
  const auto tt = parse_model_spec(
      with([](auto& j) { j["tensorized"]["top0"] = {{"in_modes", {5, 2}}, {"out_modes", {2, 3}}, {"ranks", 2}}; }), ctr());
  CHECK(parse_dlrm_config(tt.settings).tt_mlp.count("top0") == 1);
}
