#include "core/distributed/data_parallel.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

namespace comera {

DataParallel::DataParallel(const World& world, std::chrono::milliseconds timeout)
    : collective_(world, timeout) {}

void DataParallel::broadcast(torch::nn::Module& model) {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> targets = model.parameters(), tensors;
  for (const auto& b : model.buffers()) targets.push_back(b);
  std::vector<int64_t> shapes;
  for (const auto& t : targets) shapes.push_back(t.numel()), tensors.push_back(t.detach().contiguous());
  require_same(shapes, "parameter and buffer sizes");
  collective_.broadcast(tensors);
  // Gloo needs contiguous tensors: a non-contiguous one went through a copy.
  for (size_t i = 0; i < targets.size(); ++i)
    if (!tensors[i].is_same(targets[i])) targets[i].detach().copy_(tensors[i]);
}

void DataParallel::require_same(const std::vector<int64_t>& values, const std::string& what) {
  // One all-reduce of the maxima of v and -v gives both ends of every value's range.
  const int64_t n = static_cast<int64_t>(values.size());
  auto both = at::empty({2 * n + 1}, at::kLong);
  auto* p = both.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) p[i] = values[i], p[n + i] = -values[i];
  p[2 * n] = n;
  collective_.all_reduce(both, /*max=*/true);
  bool same = p[2 * n] == n;
  for (int64_t i = 0; same && i < n; ++i) same = p[i] == -p[n + i];
  if (!same)
    throw Error("rank " + std::to_string(rank()) + " of " + std::to_string(size()) +
                ": the ranks disagree on " + what +
                ": every rank must start the same run (the same config, and on --resume the same "
                "checkpoint file, visible to every rank: put it in a folder all hosts share)");
}

std::vector<double> DataParallel::sum(const std::vector<double>& values) {
  auto t = at::tensor(values, at::kDouble);
  collective_.all_reduce(t);
  const auto* p = t.data_ptr<double>();
  return std::vector<double>(p, p + t.numel());
}

void DataParallel::reduce_gradients(const std::vector<at::Tensor>& params, double weight) {
  if (time_waits_) {
    const auto start = std::chrono::steady_clock::now();
    collective_.barrier();
    wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const auto before = collective_.stats();
  buckets_.reduce(params, weight, collective_);
  gradient_bytes_ = collective_.stats().all_reduce_bytes - before.all_reduce_bytes;
  gradient_seconds_ += collective_.stats().all_reduce_seconds - before.all_reduce_seconds;
}

}  // namespace comera
