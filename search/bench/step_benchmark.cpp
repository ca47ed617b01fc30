#include "search/bench/step_benchmark.h"

#include "core/data/dataset.h"
#include "core/distributed/data_parallel.h"
#include "core/layers/size.h"
#include "core/training/objective.h"
#include "core/training/optimizer.h"
#include "core/training/training_step.h"
#include "core/util/accelerator.h"
#include "core/util/device.h"
#include "core/util/memory.h"
#include "core/util/memory_meter.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <algorithm>
#include <vector>

namespace comera {

double StepBenchmarkResult::tokens_per_s() const {
  return timing.median_ms > 0 ? 1e3 * static_cast<double>(tokens) / timing.median_ms : 0;
}

nlohmann::json StepBenchmarkResult::to_json() const {
  nlohmann::json j{{"median_ms", timing.median_ms}, {"min_ms", timing.min_ms}, {"max_ms", timing.max_ms},
          {"cpu_median_ms", timing.cpu_median_ms}, {"repeats", timing.repeats}, {"peak_mem_mb", peak_mem_mb},
          {"peak_tensor_mb", peak_tensor_mb}, {"params", params},
          {"dense_params", dense_params}, {"tokens", tokens}, {"tokens_per_s", tokens_per_s()},
          {"device_description", device}};
  if (ranks > 1)
    j.update({{"ranks", ranks}, {"all_reduce_ms", all_reduce_ms}, {"all_reduce_wait_ms", wait_ms},
              {"all_reduce_bytes", all_reduce_bytes}});
  if (profile) j["profile"] = profile->to_json();
  return j;
}

StepBenchmarkResult benchmark_step(const ModelSpec& spec, const TrainConfig& training,
                                   const StepBenchmarkOptions& o) {
  const auto device = parse_device(training.device, "training.device");
  require_device(device);
  CpuMemoryMeter tensors;
  const int64_t baseline = idle_rss_bytes();
  reset_peak_rss();
  std::optional<DeviceMemoryPeak> device_memory;  // the GPU's caching allocator, before the model
  if (!device.is_cpu()) device_memory.emplace(device);
  at::manual_seed(o.seed);
  StepBenchmarkResult result;
  {
    const auto task = spec.build(training.task, DataInfo{});
    auto& model = task->model();
    double scale = 0, initial = 0;
    {
      at::NoGradGuard no_grad;
      scale = surrogate_size(model, training.size_surrogate).item<double>();
      initial = static_cast<double>(model_size(model).tensorized);
    }
    model.to(device);
    model.train();
    if (o.parallel) o.parallel->broadcast(model);
    auto optimizer = make_optimizer(model, training.optimizer);
    const Objective objective(training.size_surrogate, training.early, training.late, scale, initial);
    const auto generator = at::detail::getDefaultCPUGenerator();
    const int ranks = o.parallel ? o.parallel->size() : 1;
    const int64_t rows = o.parallel ? Shard{o.parallel->rank(), ranks}.range(o.batch).second -
                                          Shard{o.parallel->rank(), ranks}.range(o.batch).first
                                    : o.batch;
    const auto batch = task->synthetic_batch(rows, o.length, generator).to(device);
    if (o.parallel) o.parallel->time_waits(true);
    std::vector<double> all_reduce_s, wait_s;
    const auto step = [&] {
      const double before = o.parallel ? o.parallel->gradient_seconds() : 0;
      const double waited = o.parallel ? o.parallel->wait_seconds() : 0;
      training_step(*task, *optimizer, objective, training.clip_grad_norm, batch, o.parallel, false,
                    training.precision);
      if (!o.parallel) return;
      all_reduce_s.push_back(o.parallel->gradient_seconds() - before);
      wait_s.push_back(o.parallel->wait_seconds() - waited);
    };
    result.timing = time_median([&](int) { step(); }, o.warmup, o.repeats, device);
    if (o.parallel) {
      const auto median_ms = [&](const std::vector<double>& seconds) {
        std::vector<double> measured(seconds.end() - o.repeats, seconds.end());
        std::sort(measured.begin(), measured.end());
        return 1e3 * measured[measured.size() / 2];
      };
      result.ranks = ranks;
      result.all_reduce_ms = median_ms(all_reduce_s);
      result.wait_ms = median_ms(wait_s);
      result.all_reduce_bytes = o.parallel->gradient_bytes();
    }
    const auto size = model_size(model);
    result.params = size.total_params;
    result.dense_params = size.dense_model_params;
    result.tokens = o.batch * o.length;
    result.device = device_description(device);
    if (device_memory) {
      const auto peak = device_memory->peak(), start = device_memory->at_start();
      result.peak_mem_mb = static_cast<double>(peak.reserved - start.reserved) / 1e6;
      result.peak_tensor_mb = static_cast<double>(peak.allocated - start.allocated) / 1e6;
    } else {
      result.peak_mem_mb = static_cast<double>(std::max<int64_t>(0, peak_rss_bytes() - baseline)) / 1e6;
      result.peak_tensor_mb = static_cast<double>(tensors.peak_extra_bytes()) / 1e6;
    }
    if (o.profile) {  // after the peaks: the GEMM's matrices are no part of the step
      result.profile = profile_steps(step, o.repeats);
      result.profile->gemm_gflops = measure_gemm_gflops(2048, 5, training.precision);
      result.profile->gemm_precision = precision_name(training.precision);
    }
  }
  return result;
}

}  // namespace comera
