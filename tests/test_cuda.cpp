// Every path a GPU run takes, on CUDA, against a reference computed on the CPU in float64 (or,
// for whole runs, the same run on the CPU): TT layers through pruned and truncated ranks, TTM
// lookups and bags, the attention core with dropout, one full training step, a short training
// run, and checkpoints carried between the devices. ctest registers this file only in a build
// with CUDA (COMERA_CUDA); without a GPU every case fails at its first REQUIRE.
#include "core/kernels/fast_kernels.h"
#include "core/layers/tt_linear.h"
#include "core/layers/ttm_embedding.h"
#include "core/layers/ttm_embedding_bag.h"
#include "core/layers/size.h"
#include "core/models/attention_core.h"
#include "core/kernels/dropout_mask.h"
#include "core/models/self_attention.h"
#include "core/training/objective.h"
#include "core/training/optimizer.h"
#include "core/training/trainer.h"
#include "core/training/training_step.h"
#include "core/util/accelerator.h"
#include "tests/support/catch.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tiny_trainer.h"
#include "tests/support/tt_reference.h"
#include "tests/support/ttm_reference.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/autograd.h>
#include <torch/cuda.h>
#include <torch/optim/optimizer.h>

using namespace comera;
using namespace comera::testing;

namespace {

c10::Device gpu() {
  REQUIRE(built_with_cuda());
  REQUIRE(torch::cuda::is_available());
  return c10::Device(c10::kCUDA, 0);
}

// Largest difference over the reference's largest entry, or over `floor` where that is smaller
// (a gradient that is 0 in exact arithmetic, such as an attention key bias's, is rounding alone).
double rel_err(const at::Tensor& got, const at::Tensor& want, double floor = 1e-300) {
  const auto w = want.detach().to(at::kCPU, at::kDouble), g = got.detach().to(at::kCPU, at::kDouble);
  const double scale = std::max(w.abs().max().item<double>(), floor);
  return (g - w).abs().max().item<double>() / scale;
}

double tolerance(at::ScalarType dtype) { return dtype == at::kDouble ? 1e-10 : 2e-5; }

}  // namespace

TEST_CASE("TTLinear on CUDA equals the float64 reference through pruned and truncated ranks", "[cuda]") {
  const auto device = gpu();
  struct Case {
    std::vector<int64_t> in, out, ranks, lead;
  };
  const std::vector<Case> cases{{{5, 7}, {3, 11}, {1, 5, 30, 11, 1}, {1}},
                                {{12, 8, 8}, {8, 8, 12}, {1, 12, 30, 30, 30, 12, 1}, {2, 61}},
                                {{2, 3, 2, 2}, {3, 2, 2, 2}, {1, 2, 5, 7, 20, 6, 4, 2, 1}, {3, 7}},
                                {{33}, {17}, {1, 17, 1}, {49}}};
  for (const auto dtype : {at::kDouble, at::kFloat})
    for (const bool truncate : {false, true})
      for (const auto& c : cases) {
        at::manual_seed(3);
        TTLinear layer(TTLinearOptions(c.in, c.out, c.ranks));
        {
          at::NoGradGuard no_grad;
          const auto& ds = layer->rank_vectors();
          for (auto& d : ds) d.uniform_(0.5, 1.5);
          // Entries below the threshold (masked to 0), and in one bond all but one.
          for (size_t k = 0; k < ds.size(); ++k)
            for (int64_t j = 1; j < ds[k].numel(); ++j)
              if (j % 3 == 0 || k == ds.size() / 2) ds[k][j].fill_(layer->threshold() / 2);
        }
        INFO(layer->shape().str() << " " << dtype << (truncate ? ", truncated on the GPU" : ""));
        std::vector<at::Tensor> cores, ranks;
        for (const auto& t : layer->cores()) cores.push_back(t.detach().to(at::kDouble).requires_grad_());
        for (const auto& t : layer->rank_vectors()) ranks.push_back(t.detach().to(at::kDouble).requires_grad_());
        auto bias = layer->bias.detach().to(at::kDouble).requires_grad_();

        layer->to(device, dtype);
        if (truncate) layer->truncate();
        auto shape = c.lead;
        shape.push_back(layer->shape().in_features());
        auto out_shape = c.lead;
        out_shape.push_back(layer->shape().out_features());
        const auto x = at::randn(shape, at::kDouble), g = at::randn(out_shape, at::kDouble);
        auto xg = x.clone().to(device, dtype).requires_grad_();
        auto y = layer->forward(xg);
        REQUIRE(y.device() == device);
        y.backward(g.to(device, dtype));

        auto xr = x.clone().requires_grad_();
        auto yr = at::matmul(xr, dense_weight(cores, ranks, layer->threshold())) + bias;
        yr.backward(g);
        const double tol = tolerance(dtype);
        CHECK(rel_err(y, yr) < tol);
        CHECK(rel_err(xg.grad(), xr.grad()) < tol);
        CHECK(rel_err(layer->bias.grad(), bias.grad()) < tol);
        if (truncate) continue;  // a truncated layer's cores are the kept slices: checked through y, dX
        for (size_t k = 0; k < cores.size(); ++k) CHECK(rel_err(layer->cores()[k].grad(), cores[k].grad()) < tol);
        for (size_t k = 0; k < ranks.size(); ++k)
          CHECK(rel_err(layer->rank_vectors()[k].grad(), ranks[k].grad()) < tol);
      }
}

TEST_CASE("TTM lookup and embedding bag on CUDA equal the float64 dense table", "[cuda]") {
  const auto device = gpu();
  for (const auto dtype : {at::kDouble, at::kFloat}) {
    at::manual_seed(5);
    TTMEmbedding layer(TTMEmbeddingOptions(50, {3, 4, 5}, {2, 3, 2}, {1, 3, 4, 1}));
    layer->to(at::kDouble);
    {
      at::NoGradGuard no_grad;
      for (auto& d : layer->rank_vectors()) {
        d.uniform_(0.5, 1.5);
        d[0] = 1e-3;  // pruned
      }
    }
    std::vector<at::Tensor> ref_params = layer->cores();
    for (const auto& d : layer->rank_vectors()) ref_params.push_back(d);
    const at::Tensor table = dense_table(*layer);
    const auto ids = at::tensor(std::vector<int64_t>{7, 3, 7, 49, 0, 7, 12, 12, 31}, at::kLong).view({3, 3});
    const auto probe = at::randn({3, 3, table.size(1)}, at::kDouble);
    const auto expected = table.index_select(0, ids.reshape({-1})).view(probe.sizes());
    const auto g_ref = torch::autograd::grad({(expected * probe).sum()}, ref_params);

    layer->to(device, dtype);
    std::vector<at::Tensor> params = layer->cores();
    for (const auto& d : layer->rank_vectors()) params.push_back(d);
    for (int path = 0; path < 3; ++path) {
      INFO(dtype << ", path " << (path == 0 ? "dedup" : path == 1 ? "no dedup" : "naive"));
      layer->options.dedup(path == 0);
      const auto gids = ids.to(device);
      const auto out = path == 2 ? layer->forward_naive(gids) : layer->forward(gids);
      REQUIRE(out.device() == device);
      CHECK(rel_err(out, expected) < tolerance(dtype));
      const auto g = torch::autograd::grad({(out * probe.to(device, dtype)).sum()}, params);
      for (size_t p = 0; p < params.size(); ++p) CHECK(rel_err(g[p], g_ref[p]) < tolerance(dtype));
    }

    // Bags: repeats, an empty bag in the middle and one at the end, per-sample weights.
    at::manual_seed(6);
    TTMEmbeddingBag bag(TTMEmbeddingBagOptions(50, 12).vocab_modes({3, 4, 5}).emb_modes({2, 3, 2}).ranks({1, 3, 4, 1}));
    bag->to(at::kDouble);
    const auto bag_table = dense_table(bag->table());
    const std::vector<int64_t> indices{7, 3, 7, 49, 0, 7, 12, 12, 31}, offsets{0, 2, 2, 5, 9};
    const auto weights = at::randn({9}, at::kDouble);
    std::vector<at::Tensor> rows;
    for (size_t b = 0; b < offsets.size(); ++b) {
      const int64_t end = b + 1 < offsets.size() ? offsets[b + 1] : 9;
      at::Tensor acc = at::zeros({12}, at::kDouble);
      for (int64_t i = offsets[b]; i < end; ++i) acc = acc + bag_table[indices[i]] * weights[i];
      rows.push_back(acc);
    }
    const auto bag_expected = at::stack(rows);
    bag->to(device, dtype);
    const auto pooled = bag->forward(at::tensor(indices, at::kLong).to(device),
                                     at::tensor(offsets, at::kLong).to(device), weights.to(device, dtype));
    INFO(dtype << ", bag");
    CHECK(rel_err(pooled, bag_expected) < tolerance(dtype));
  }
}

TEST_CASE("attention core on CUDA equals the float64 reference, dropout mask included", "[cuda]") {
  const auto device = gpu();
  const int64_t B = 2, T = 37, h = 3, dh = 16, D = h * dh;
  const double p = 0.25, scale = 0.7;
  auto padding = at::ones({B, T}, at::kLong);
  padding[1].narrow(0, 9, 4).fill_(0);
  const auto q = at::randn({B, T, D}, at::kDouble), k = at::randn({B, T, D}, at::kDouble),
             v = at::randn({B, T, D}, at::kDouble), g = at::randn({B, T, D}, at::kDouble);
  auto split = [&](const at::Tensor& t) { return t.view({B, T, h, dh}).permute({0, 2, 1, 3}); };
  for (const auto dtype : {at::kDouble, at::kFloat}) {
    INFO(dtype);
    auto qg = q.clone().to(device, dtype).requires_grad_(), kg = k.clone().to(device, dtype).requires_grad_(),
         vg = v.clone().to(device, dtype).requires_grad_();
    at::manual_seed(11);
    const auto y = attention_core(qg, kg, vg, attention_mask_bias(padding, dtype).to(device), h, p, true, scale);
    REQUIRE(y.device() == device);
    y.backward(g.to(device, dtype));
    // The mask the core drew: the first seed after manual_seed(11), in (B, h, T, T) order.
    at::manual_seed(11);
    auto m = at::ones({B, h, T, T}, at::kDouble);
    DropoutMask(p).multipliers(0, m.numel(), m.data_ptr<double>());
    auto qr = q.clone().requires_grad_(), kr = k.clone().requires_grad_(), vr = v.clone().requires_grad_();
    const auto probs = at::softmax(at::matmul(split(qr), split(kr).transpose(-2, -1)) * scale +
                                       attention_mask_bias(padding, at::kDouble), -1);
    const auto ref = at::matmul(probs * m, split(vr)).permute({0, 2, 1, 3}).reshape({B, T, D});
    ref.backward(g);
    CHECK(rel_err(y, ref) < tolerance(dtype));
    CHECK(rel_err(qg.grad(), qr.grad()) < tolerance(dtype));
    CHECK(rel_err(kg.grad(), kr.grad()) < tolerance(dtype));
    CHECK(rel_err(vg.grad(), vr.grad()) < tolerance(dtype));
  }
}

TEST_CASE("one full training step on CUDA gives the float64 CPU step's loss and gradients", "[cuda]") {
  const auto device = gpu();
  const auto spec = tiny_model();
  auto training = tiny_training();
  // Built twice from one seed: the same parameters, one copy per device.
  auto build = [&] {
    at::manual_seed(4);
    return spec.build(training.task, DataInfo{});
  };
  auto cpu_task = build(), gpu_task = build();
  auto& cpu_model = cpu_task->model();
  auto& gpu_model = gpu_task->model();
  cpu_model.to(at::kDouble);
  gpu_model.to(device);
  cpu_model.train();
  gpu_model.train();
  double scale = 0, initial = 0;
  {
    at::NoGradGuard no_grad;
    scale = surrogate_size(cpu_model, training.size_surrogate).item<double>();
    initial = static_cast<double>(model_size(cpu_model).tensorized);
  }
  const Objective objective(training.size_surrogate, training.early, training.late, scale, initial);
  auto cpu_opt = make_optimizer(cpu_model, training.optimizer);
  auto gpu_opt = make_optimizer(gpu_model, training.optimizer);
  const auto batch = cpu_task->synthetic_batch(4, 12, at::detail::getDefaultCPUGenerator());
  std::map<std::string, at::Tensor> before;
  for (const auto& item : gpu_model.named_parameters()) before[item.key()] = item.value().detach().clone();

  // The same dropout masks on both: each step draws its seeds from the CPU generator.
  const FastKernelsGuard composite(false);  // the CPU reference takes the paths CUDA takes
  at::manual_seed(9);
  const auto r_cpu = training_step(*cpu_task, *cpu_opt, objective, 0, batch);
  at::manual_seed(9);
  const auto r_gpu = training_step(*gpu_task, *gpu_opt, objective, 0, batch.to(device));
  REQUIRE(r_gpu.finite);
  CHECK(r_gpu.task_loss == Approx(r_cpu.task_loss).epsilon(1e-5));
  CHECK(r_gpu.objective == Approx(r_cpu.objective).epsilon(1e-5));
  CHECK(r_gpu.size == Approx(r_cpu.size).epsilon(1e-5));
  const auto cpu_params = cpu_model.named_parameters();
  int compared = 0;
  for (const auto& item : gpu_model.named_parameters()) {
    INFO(item.key());
    const auto& p = item.value();
    REQUIRE(p.device() == device);
    const auto& ref = cpu_params[item.key()];
    if (!ref.grad().defined()) continue;
    ++compared;
    REQUIRE(p.grad().defined());
    CHECK(rel_err(p.grad(), ref.grad(), 1e-3) < 1e-4);
    // AdamW moved every parameter with a gradient, by at most about its learning rate.
    if (ref.grad().abs().max().item<double>() > 0)
      CHECK((p.detach() - before[item.key()]).abs().max().item<double>() > 0);
  }
  CHECK(compared > 10);
}

TEST_CASE("a short run on CUDA gives the CPU run's losses; checkpoints move between the devices",
          "[cuda]") {
  gpu();
  const TempDir dir;
  const auto train = synthetic_pairs(24, 1), eval = synthetic_pairs(9, 2);
  const auto model = tiny_model();
  auto on = [](const std::string& device) {
    auto t = tiny_training();
    t.device = device;
    return t;
  };
  auto options = [](const std::string& checkpoint, int64_t stop_at = 0, bool resume = false) {
    TrainerOptions o;
    o.checkpoint = checkpoint;
    o.stop_at_step = stop_at;
    o.resume = resume;
    return o;
  };
  Trainer cpu_run(model, on("cpu"), pairs_data(train, eval), options(dir.file("cpu.pt")));
  const auto a = cpu_run.run();
  Trainer gpu_run(model, on("cuda"), pairs_data(train, eval), options(dir.file("gpu.pt")));
  const auto b = gpu_run.run();
  REQUIRE(a.status == RunStatus::Completed);
  REQUIRE(b.status == RunStatus::Completed);
  REQUIRE(a.epochs.size() == b.epochs.size());
  for (size_t e = 0; e < a.epochs.size(); ++e) {
    INFO("epoch " << e);
    // float32 on both: summation orders differ, and AdamW's normalised steps let tiny gradient
    // differences through, so agreement is to a few parts in a thousand, not to the last bit.
    CHECK(b.epochs[e].train_loss == Approx(a.epochs[e].train_loss).epsilon(2e-3));
    CHECK(b.epochs[e].eval_loss == Approx(a.epochs[e].eval_loss).epsilon(2e-3));
    CHECK(b.epochs[e].peak_tensor_mb > 0);  // from the GPU's caching allocator
  }

  for (const auto& [first, second] : {std::pair<std::string, std::string>{"cuda", "cpu"}, {"cpu", "cuda"}}) {
    INFO(first << " then " << second);
    const auto path = dir.file(first + "_" + second + ".pt");
    {
      Trainer part(model, on(first), pairs_data(train, eval), options(path, 7));
      CHECK(part.run().steps == 7);
    }
    Trainer rest(model, on(second), pairs_data(train, eval), options(path, 0, true));
    REQUIRE(rest.resumed());
    const auto c = rest.run();
    REQUIRE(c.status == RunStatus::Completed);
    CHECK(c.epochs.back().eval_loss == Approx(a.epochs.back().eval_loss).epsilon(2e-3));
    const auto ref = cpu_run.model().named_parameters();
    for (const auto& item : rest.model().named_parameters()) {
      INFO(item.key());
      CHECK(item.value().device().type() == (second == "cpu" ? c10::kCPU : c10::kCUDA));
      CHECK(rel_err(item.value(), ref[item.key()]) < 5e-2);
    }
  }
}

TEST_CASE("device timing and memory peaks read the GPU", "[cuda]") {
  const auto device = gpu();
  CHECK(device_description(device).find("sm_") != std::string::npos);
  const DeviceMemoryPeak peak(device);
  {
    const auto t = at::empty({64, 1024, 1024}, at::TensorOptions(device).dtype(at::kFloat));  // 256 MiB
    DeviceTimer timer(device);
    timer.start();
    for (int i = 0; i < 20; ++i) t.mul_(1.0001);
    CHECK(timer.stop_ms() > 0);
  }
  CHECK(peak.peak().allocated - peak.at_start().allocated >= int64_t{256} << 20);
  CHECK(peak.current().allocated - peak.at_start().allocated < int64_t{256} << 20);
}
