#include "core/training/galore.h"

#include "core/models/projected_weights.h"
#include "core/training/fused_adamw.h"
#include "core/training/optimizer_groups.h"
#include "core/training/optimizer_kind.h"
#include "core/training/train_config.h"
#include "core/util/config_reader.h"

#include "core/util/error.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/optim/serialize.h>

#include <algorithm>
#include <cmath>

namespace comera {

namespace {

// Each singular vector (a row of `p` when `rows`, else a column) with its largest-magnitude entry
// made positive: the SVD's signs are arbitrary, and a refresh that finds the same subspace should
// keep the kept moments' coordinates meaning the same thing.
at::Tensor fix_signs(const at::Tensor& p, bool rows) {
  const int64_t dim = rows ? 1 : 0;
  const auto largest = p.abs().argmax(dim, /*keepdim=*/true);
  auto sign = p.gather(dim, largest).sign();
  sign = at::where(sign == 0, at::ones_like(sign), sign);
  return p * sign;
}

// The projector from an SVD of the gradient (float32, or float64 for a float64 weight).
at::Tensor projector_of(const at::Tensor& grad, const GaloreShapes& shapes) {
  const auto g = grad.scalar_type() == at::kDouble ? grad : grad.to(at::kFloat);
  const auto svd = at::linalg_svd(g, /*full_matrices=*/false);
  at::Tensor p;
  if (shapes.right)
    p = fix_signs(std::get<2>(svd).narrow(0, 0, shapes.projector[0]), true);
  else
    p = fix_signs(std::get<0>(svd).narrow(1, 0, shapes.projector[1]), false);
  return p.to(grad.scalar_type()).contiguous();
}

}  // namespace

void GaloreParamState::serialize(torch::serialize::OutputArchive& archive) const {
  archive.write("step", at::tensor(step()), /*is_buffer=*/true);
  archive.write("exp_avg", exp_avg(), true);
  archive.write("exp_avg_sq", exp_avg_sq(), true);
  if (projector().defined()) archive.write("projector", projector(), true);
}

void GaloreParamState::serialize(torch::serialize::InputArchive& archive) {
  at::Tensor s, m, v, p;
  archive.read("step", s, true);
  archive.read("exp_avg", m, true);
  archive.read("exp_avg_sq", v, true);
  step(s.item<int64_t>());
  exp_avg(m);
  exp_avg_sq(v);
  projector(archive.try_read("projector", p, true) ? p : at::Tensor());
}

GaloreShapes galore_shapes(int64_t rows, int64_t cols, int64_t rank) {
  GaloreShapes s;
  s.right = rows >= cols;
  const int64_t r = std::min(rank, std::min(rows, cols));
  s.projector = s.right ? std::vector<int64_t>{r, cols} : std::vector<int64_t>{rows, r};
  s.moments = s.right ? std::vector<int64_t>{rows, r} : std::vector<int64_t>{r, cols};
  return s;
}

Galore::Galore(std::vector<torch::optim::OptimizerParamGroup> groups,
               torch::optim::AdamWOptions defaults, GaloreSettings settings,
               const std::vector<at::Tensor>& projected)
    : torch::optim::Optimizer(std::move(groups),
                              std::make_unique<torch::optim::AdamWOptions>(defaults)),
      settings_(settings) {
  if (settings_.rank < 1)
    throw Error("GaLore: rank " + std::to_string(settings_.rank) + " must be >= 1");
  if (settings_.update_proj_gap < 1)
    throw Error("GaLore: update_proj_gap " + std::to_string(settings_.update_proj_gap) +
                " must be >= 1 (steps between projector refreshes)");
  if (defaults.amsgrad()) throw Error("GaLore does not support amsgrad (set amsgrad to false)");
  for (const auto& p : projected) {
    if (p.dim() != 2)
      throw Error("GaLore projects 2-D weights only, got one of shape " + c10::str(p.sizes()));
    projected_.insert(p.unsafeGetTensorImpl());
  }
}

torch::Tensor Galore::step(LossClosure closure) {
  const torch::Tensor loss = closure ? closure() : torch::Tensor();
  at::NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      TORCH_CHECK(!p.grad().is_sparse(), "GaLore does not support sparse gradients");
      const bool project = is_projected(p);
      const auto shapes = project ? galore_shapes(p.size(0), p.size(1), settings_.rank) : GaloreShapes{};
      auto& slot = state()[state_key(p)];
      if (!slot) {
        auto s = std::make_unique<GaloreParamState>();
        s->exp_avg(at::zeros(project ? shapes.moments : p.sizes().vec(), p.options()));
        s->exp_avg_sq(at::zeros_like(s->exp_avg()));
        slot = std::move(s);
      }
      auto& s = static_cast<GaloreParamState&>(*slot);
      at::Tensor g = p.grad();
      if (project) {
        if (s.step() % settings_.update_proj_gap == 0) s.projector(projector_of(g, shapes));
        g = shapes.right ? g.matmul(s.projector().t()) : s.projector().t().matmul(g);
      }
      s.step(s.step() + 1);
      const auto k = static_cast<double>(s.step());
      const double bias1 = 1 - std::pow(beta1, k), bias2_sqrt = std::sqrt(1 - std::pow(beta2, k));
      s.exp_avg().mul_(beta1).add_(g, 1 - beta1);
      s.exp_avg_sq().mul_(beta2).addcmul_(g, g, 1 - beta2);
      auto direction = s.exp_avg() / ((s.exp_avg_sq().sqrt() / bias2_sqrt).add_(o.eps()) * bias1);
      if (project)
        direction = (shapes.right ? direction.matmul(s.projector()) : s.projector().matmul(direction))
                        .mul_(settings_.scale);
      if (o.weight_decay() != 0) p.mul_(1 - o.lr() * o.weight_decay());
      p.add_(direction, -o.lr());
    }
  }
  return loss;
}

void Galore::save(torch::serialize::OutputArchive& archive) const {
  torch::optim::serialize<GaloreParamState, torch::optim::AdamWOptions>(archive, *this);
}

void Galore::load(torch::serialize::InputArchive& archive) {
  torch::optim::serialize<GaloreParamState, torch::optim::AdamWOptions>(archive, *this);
}

void Galore::slice_state(const std::vector<ParamSlice>& slices) {
  for (const auto& slice : slices) {
    auto it = state_.find(state_key(slice.param));
    if (it == state_.end()) continue;
    if (is_projected(slice.param))
      throw Error("GaLore cannot slice the projected state of a truncated weight (project only "
                  "dense weights)");
    auto& s = static_cast<GaloreParamState&>(*it->second);
    s.exp_avg(sliced(s.exp_avg(), slice));
    s.exp_avg_sq(sliced(s.exp_avg_sq(), slice));
  }
}

int64_t Galore::state_elements(const at::Tensor& p) const {
  int64_t n = p.numel();
  auto it = state_.find(state_key(p));
  if (it == state_.end()) return n;
  const auto& s = static_cast<const GaloreParamState&>(*it->second);
  for (const auto* t : {&s.exp_avg(), &s.exp_avg_sq(), &s.projector()})
    if (t->defined()) n += t->numel();
  return n;
}

namespace {

std::vector<at::Tensor> projected(const torch::nn::Module& model) {
  const auto* named = dynamic_cast<const ProjectedWeights*>(&model);
  return named ? named->projected_weights() : std::vector<at::Tensor>{};
}

class GaloreKind : public OptimizerKind {
 public:
  std::string name() const override { return "galore"; }
  nlohmann::json read(const ConfigReader& o) const override {
    const GaloreSettings d;
    auto s = read_adam_moments(o);
    s.update({{"rank", o.integer("rank", d.rank, 1)},
              {"update_proj_gap", o.integer("update_proj_gap", d.update_proj_gap, 1)},
              {"scale", o.number("scale", d.scale)}});
    return s;
  }
  std::unique_ptr<torch::optim::Optimizer> make(const torch::nn::Module& model, const ParameterGroups& groups,
                                                const OptimizerConfig& config) const override {
    const auto s = config.complete_settings();
    const auto options = adam_options(s, config.lr_other, config.weight_decay);
    return std::make_unique<Galore>(torch_groups(groups, config.rates(), options), options,
                                    GaloreSettings{s.at("rank"), s.at("update_proj_gap"), s.at("scale")},
                                    projected(model));
  }
};

}  // namespace

std::shared_ptr<const OptimizerKind> galore_kind() { return std::make_shared<GaloreKind>(); }

}  // namespace comera
