#include "core/training/step_benchmark.h"

#include "core/layers/size.h"
#include "core/models/transformer.h"
#include "core/training/objective.h"
#include "core/training/optimizer.h"
#include "core/training/training_step.h"
#include "core/util/error.h"
#include "core/util/memory.h"
#include "core/util/memory_meter.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <torch/optim/adamw.h>

namespace comera {

double StepBenchmarkResult::tokens_per_s() const {
  return timing.median_ms > 0 ? 1e3 * static_cast<double>(tokens) / timing.median_ms : 0;
}

nlohmann::json StepBenchmarkResult::to_json() const {
  return {{"median_ms", timing.median_ms}, {"min_ms", timing.min_ms}, {"max_ms", timing.max_ms},
          {"cpu_median_ms", timing.cpu_median_ms}, {"repeats", timing.repeats}, {"peak_mem_mb", peak_mem_mb},
          {"peak_tensor_mb", peak_tensor_mb}, {"params", params},
          {"dense_params", dense_params}, {"tokens", tokens}, {"tokens_per_s", tokens_per_s()}};
}

StepBenchmarkResult benchmark_step(const ModelConfig& config, const TrainConfig& training,
                                   const StepBenchmarkOptions& o) {
  if (o.length > config.max_positions)
    throw Error("sequence length " + std::to_string(o.length) + " exceeds model.max_positions " +
                std::to_string(config.max_positions) + " (lower --seq)");
  CpuMemoryMeter tensors;
  const int64_t baseline = idle_rss_bytes();
  reset_peak_rss();
  at::manual_seed(o.seed);
  StepBenchmarkResult result;
  {
    Transformer model(config);
    model->train();
    auto optimizer = make_optimizer(*model, training.optimizer);
    double scale = 0, initial = 0;
    {
      at::NoGradGuard no_grad;
      scale = surrogate_size(*model, training.size_surrogate).item<double>();
      initial = static_cast<double>(model_size(*model).tensorized);
    }
    const Objective objective(training.size_surrogate, training.early, training.late, scale, initial);
    PairBatch batch;
    batch.input_ids = at::randint(0, config.vocab, {o.batch, o.length}, at::kLong);
    batch.segment_ids = at::zeros({o.batch, o.length}, at::kLong);
    batch.segment_ids.narrow(1, o.length / 2, o.length - o.length / 2).fill_(1);
    batch.attention_mask = at::ones({o.batch, o.length}, at::kLong);
    batch.labels = at::randint(0, std::max<int64_t>(1, config.classes), {o.batch}, at::kLong);
    result.timing = time_median(
        [&](int) { training_step(model, *optimizer, objective, training.clip_grad_norm, batch); },
        o.warmup, o.repeats);
    const auto size = model_size(*model);
    result.params = size.total_params;
    result.dense_params = size.dense_model_params;
    result.tokens = o.batch * o.length;
    result.peak_mem_mb = static_cast<double>(std::max<int64_t>(0, peak_rss_bytes() - baseline)) / 1e6;
    result.peak_tensor_mb = static_cast<double>(tensors.peak_extra_bytes()) / 1e6;
  }
  return result;
}

}  // namespace comera
