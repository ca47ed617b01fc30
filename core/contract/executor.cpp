#include "core/contract/executor.h"

#include "core/contract/tt_network.h"
#include "core/util/error.h"
#include "core/util/threads.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>

namespace comera::contract {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Contractions below this many multiply-adds run on one thread: a parallel region is a barrier
// that costs more than it saves on small GEMMs (and far more on a busy machine).
constexpr double kSerialMacs = 1 << 21;

bool has(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// A tensor, contiguous, whose dimension i carries network index labels[i].
struct Labeled {
  at::Tensor t;
  std::vector<int> labels;
};

// What the consumer of a result wants: an exact layout (a final gradient), or the indices it
// will contract over gathered at one end (so it can view the result as a matrix).
struct Want {
  std::vector<int> exact;
  std::vector<int> group;

  bool fits(const std::vector<int>& layout) const {
    if (!exact.empty()) return layout == exact;
    const size_t g = group.size(), n = layout.size();
    auto all_in = [&](size_t from, size_t to) {
      for (size_t i = from; i < to; ++i)
        if (!has(group, layout[i])) return false;
      return true;
    };
    return g == 0 || all_in(0, g) || all_in(n - g, n);
  }
};

// One operand laid out for a GEMM: free indices and contracted indices each form one block.
struct Arrangement {
  std::vector<int> free, contracted;
  bool contracted_first = false;
  bool copy = false;
  std::vector<int> layout() const {
    std::vector<int> l = contracted_first ? contracted : free;
    const auto& second = contracted_first ? free : contracted;
    l.insert(l.end(), second.begin(), second.end());
    return l;
  }
};

class Contractor {
 public:
  explicit Contractor(const TensorNetwork& net) : net_(net) {}

  Labeled contract(const Labeled& a, const Labeled& b, const Want& want) const {
    std::vector<int> ca, cb, fa, fb;
    for (int l : a.labels) (has(b.labels, l) ? ca : fa).push_back(l);
    for (int l : b.labels) (has(a.labels, l) ? cb : fb).push_back(l);
    const auto opts_a = arrangements(a, ca, fa, {ca, cb}, want, false);
    const auto opts_b = arrangements(b, cb, fb, {ca, cb}, want, true);
    const Arrangement* best_a = nullptr;
    const Arrangement* best_b = nullptr;
    bool best_ab = true;
    double best = 0;
    for (const auto& oa : opts_a)
      for (const auto& ob : opts_b) {
        if (oa.contracted != ob.contracted) continue;
        const double copies = (oa.copy ? elements(a.labels) : 0) + (ob.copy ? elements(b.labels) : 0);
        for (bool ab : {true, false}) {
          const double cost = copies + (want.fits(output(oa, ob, ab)) ? 0 : elements(a.labels, b.labels));
          if (!best_a || cost < best) best_a = &oa, best_b = &ob, best_ab = ab, best = cost;
        }
      }
    std::optional<ThreadLimit> serial;
    if (elements(a.labels, b.labels) * elements(ca) < kSerialMacs) serial.emplace(1);
    const at::Tensor ma = matrix(a, *best_a, false), mb = matrix(b, *best_b, true);
    Labeled out{best_ab ? at::mm(ma, mb) : at::mm(mb.t(), ma.t()), output(*best_a, *best_b, best_ab)};
    out.t = out.t.view(sizes(out.labels));
    return out;
  }

  // t laid out as `labels` (a permutation of t's), contiguous.
  static Labeled arrange(const Labeled& x, const std::vector<int>& labels) {
    if (labels == x.labels) return x;
    std::vector<int64_t> perm;
    for (int l : labels) perm.push_back(std::find(x.labels.begin(), x.labels.end(), l) - x.labels.begin());
    return {x.t.permute(perm).contiguous(), labels};
  }

  std::vector<int64_t> sizes(const std::vector<int>& labels) const {
    std::vector<int64_t> s;
    for (int l : labels) s.push_back(net_.index(l).size);
    return s;
  }

 private:
  double elements(const std::vector<int>& labels, const std::vector<int>& more = {}) const {
    double n = 1;
    for (int l : labels)
      if (!has(more, l)) n *= static_cast<double>(net_.index(l).size);
    for (int l : more)
      if (!has(labels, l)) n *= static_cast<double>(net_.index(l).size);
    return n;
  }

  static std::vector<int> output(const Arrangement& a, const Arrangement& b, bool ab) {
    std::vector<int> l = ab ? a.free : b.free;
    const auto& second = ab ? b.free : a.free;
    l.insert(l.end(), second.begin(), second.end());
    return l;
  }

  // The layouts one operand can take: as it is when its contracted indices sit at one end,
  // or copied with the contracted block in either operand's order and the free block in an
  // order that helps the consumer.
  static std::vector<Arrangement> arrangements(const Labeled& x, const std::vector<int>& c,
                                               const std::vector<int>& f,
                                               const std::vector<std::vector<int>>& c_orders,
                                               const Want& want, bool contracted_first) {
    std::vector<Arrangement> out;
    if (std::equal(c.begin(), c.end(), x.labels.end() - c.size())) out.push_back({f, c, false, false});
    if (std::equal(c.begin(), c.end(), x.labels.begin())) out.push_back({f, c, true, false});
    std::vector<std::vector<int>> frees{f};
    auto add_free = [&](std::vector<int> order) {
      if (std::find(frees.begin(), frees.end(), order) == frees.end()) frees.push_back(std::move(order));
    };
    const auto& key = want.exact.empty() ? want.group : want.exact;
    auto moved = [&](bool to_end) {
      std::vector<int> o;
      for (int l : f)
        if (has(key, l) != to_end) o.push_back(l);
      for (int l : f)
        if (has(key, l) == to_end) o.push_back(l);
      return o;
    };
    add_free(moved(true));
    add_free(moved(false));
    if (!want.exact.empty()) {
      std::vector<int> o;
      for (int l : want.exact)
        if (has(f, l)) o.push_back(l);
      add_free(o);
    }
    for (const auto& co : c_orders)
      for (const auto& fo : frees) out.push_back({fo, co, contracted_first, true});
    return out;
  }

  // x as a matrix: (free, contracted) for the left operand, (contracted, free) for the right.
  at::Tensor matrix(const Labeled& x, const Arrangement& arr, bool right) const {
    const Labeled y = arr.copy ? arrange(x, arr.layout()) : x;
    const int64_t nf = static_cast<int64_t>(elements(arr.free));
    const int64_t nc = static_cast<int64_t>(elements(arr.contracted));
    const at::Tensor m = arr.contracted_first ? y.t.view({nc, nf}) : y.t.view({nf, nc});
    return arr.contracted_first == right ? m : m.t();
  }

  const TensorNetwork& net_;
};

TTShape shape_of(const std::vector<at::Tensor>& cores) {
  if (cores.size() < 2 || cores.size() % 2)
    throw Error("run_plan: expected 2d TT cores, got " + std::to_string(cores.size()));
  std::vector<int64_t> in, out, ranks{1};
  for (size_t k = 0; k < cores.size(); ++k) {
    if (cores[k].dim() != 3)
      throw Error("run_plan: core " + std::to_string(k + 1) + " has " + std::to_string(cores[k].dim()) +
                  " dimensions; TT cores are (r_{k-1}, s_k, r_k)");
    (k < cores.size() / 2 ? in : out).push_back(cores[k].size(1));
    ranks.push_back(cores[k].size(2));
  }
  return TTShape(in, out, ranks);
}

// Evaluates a forward and a backward order over one TT network, sharing results by operand set.
class Evaluator {
 public:
  Evaluator(const TTNetwork& tt, const at::Tensor& x, const std::vector<at::Tensor>& cores)
      : tt_(tt), net_(tt.net()), contractor_(net_) {
    leaves_.resize(net_.operands());
    leaves_[tt.x()] = leaf(tt.x(), x);
    for (int k = 1; k <= 2 * tt.d(); ++k) leaves_[k] = leaf(k, cores[k - 1]);
  }

  Labeled leaf(int k, const at::Tensor& t) const {
    const auto& labels = net_.operand(k).indices;
    return {t.contiguous().view(contractor_.sizes(labels)), labels};
  }

  // Results of these operand sets are kept once computed (all of them when keep_all).
  void keep(Mask m) { keep_.push_back(m); }
  void keep_all() { keep_all_ = true; }
  std::unordered_map<Mask, Labeled>& kept() { return values_; }

  // The contraction of operand set m by `order`, laid out as `want` asks where that is free.
  Labeled value(const Order& order, Mask m, const Want& want) {
    if (popcount(m) == 1) return leaves_[__builtin_ctz(m)];
    auto it = values_.find(m);
    if (it != values_.end()) return it->second;
    const Step& s = order.split(m);
    const Want inner{{}, shared(s.a, s.b)};
    Labeled r = contractor_.contract(value(order, s.a, inner), value(order, s.b, inner), want);
    if (keep_all_ || std::find(keep_.begin(), keep_.end(), m) != keep_.end()) values_[m] = r;
    return r;
  }

  // Passes env (the contraction of everything outside node n) down the backward order,
  // filling grads[k] for every operand k with needs[k].
  void gradient(const Order& order, Mask n, const Labeled& env, const std::vector<bool>& needs,
                std::vector<at::Tensor>& grads) {
    if (popcount(n) == 1) {
      const int k = __builtin_ctz(n);
      grads[k] = Contractor::arrange(env, net_.operand(k).indices).t;
      return;
    }
    const Step& s = order.split(n);
    for (const auto& [child, sibling] : {std::make_pair(s.a, s.b), std::make_pair(s.b, s.a)}) {
      bool needed = false;
      for (int k = 0; k < net_.operands(); ++k) needed |= (child & bit(k)) && needs[k];
      if (!needed) continue;
      const Mask outside = net_.all() & ~n;
      const Labeled v = value(order, sibling, Want{{}, shared(outside, sibling)});
      gradient(order, child, contractor_.contract(env, v, want_gradient(order, child)), needs, grads);
    }
  }

  Labeled output_gradient(const at::Tensor& dy) const { return leaf(tt_.dy(), dy); }
  const std::vector<int>& output_labels() const { return net_.operand(tt_.dy()).indices; }

 private:
  std::vector<int> shared(Mask a, Mask b) const {
    std::vector<int> oa = net_.open(a), out;
    for (int l : net_.open(b))
      if (has(oa, l)) out.push_back(l);
    return out;
  }
  // A leaf's gradient in the leaf's own layout; an inner node's gradient grouped for the
  // contraction with its larger child.
  Want want_gradient(const Order& order, Mask child) const {
    if (popcount(child) == 1) return Want{net_.operand(__builtin_ctz(child)).indices, {}};
    const Step& s = order.split(child);
    const Mask big = net_.size(s.a) >= net_.size(s.b) ? s.a : s.b;
    return Want{{}, shared(net_.all() & ~child, big)};
  }

  const TTNetwork& tt_;
  const TensorNetwork& net_;
  Contractor contractor_;
  std::vector<Labeled> leaves_;
  std::vector<Mask> keep_;
  bool keep_all_ = false;
  std::unordered_map<Mask, Labeled> values_;
};

// Forward results the backward order uses (nodes both orders share, root excluded).
std::vector<Mask> shared_results(const ContractionPlan& plan) {
  std::vector<Mask> out;
  const Mask root = plan.forward.leaves();
  for (const Step& s : plan.backward.steps())
    for (Mask m : {s.a, s.b})
      if (popcount(m) > 1 && m != root && plan.forward.is_node(m)) out.push_back(m);
  return out;
}

// Core k scaled on its right bond by rank vector k (those that have one).
std::vector<at::Tensor> scaled_cores(const std::vector<at::Tensor>& cores,
                                     const std::vector<at::Tensor>& ranks) {
  std::vector<at::Tensor> out(cores);
  for (size_t k = 0; k < ranks.size(); ++k) out[k] = cores[k] * ranks[k].view({1, 1, -1});
  return out;
}

// Inputs: x, the 2d cores, then the rank vectors (none, or 2d-1), then the bias (none or one).
// Rank vectors and bias are applied inside, so they add no autograd nodes of their own.
struct PlanFunction : public torch::autograd::Function<PlanFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, at::TensorList cores,
                            at::TensorList ranks, at::TensorList bias,
                            const std::shared_ptr<const ContractionPlan>& plan) {
    const std::vector<at::Tensor> core_list(cores.begin(), cores.end());
    const TTNetwork tt(shape_of(core_list), x.size(0));
    Evaluator ev(tt, x, scaled_cores(core_list, ranks.vec()));
    const auto keep = shared_results(*plan);
    for (Mask m : keep) ev.keep(m);
    Labeled y = ev.value(plan->forward, plan->forward.leaves(), Want{ev.output_labels(), {}});
    at::Tensor out = Contractor::arrange(y, ev.output_labels()).t.view({x.size(0), -1});
    if (!bias.empty()) out.add_(bias[0]);

    variable_list saved{x};
    saved.insert(saved.end(), cores.begin(), cores.end());
    saved.insert(saved.end(), ranks.begin(), ranks.end());
    std::vector<int64_t> masks, labels;
    for (Mask m : keep) {
      const Labeled& v = ev.kept().at(m);
      saved.push_back(v.t);
      masks.push_back(m);
      labels.push_back(static_cast<int64_t>(v.labels.size()));
      labels.insert(labels.end(), v.labels.begin(), v.labels.end());
    }
    ctx->save_for_backward(saved);
    ctx->saved_data["plan"] = plan->str(tt.net());
    ctx->saved_data["cores"] = static_cast<int64_t>(cores.size());
    ctx->saved_data["ranks"] = static_cast<int64_t>(ranks.size());
    ctx->saved_data["bias"] = !bias.empty();
    ctx->saved_data["masks"] = masks;
    ctx->saved_data["labels"] = labels;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const auto masks = ctx->saved_data["masks"].toIntVector();
    const auto labels = ctx->saved_data["labels"].toIntVector();
    const auto n_cores = static_cast<size_t>(ctx->saved_data["cores"].toInt());
    const auto n_ranks = static_cast<size_t>(ctx->saved_data["ranks"].toInt());
    const bool has_bias = ctx->saved_data["bias"].toBool();
    const at::Tensor& x = saved[0];
    const std::vector<at::Tensor> cores(saved.begin() + 1, saved.begin() + 1 + n_cores);
    const std::vector<at::Tensor> ranks(saved.begin() + 1 + n_cores, saved.begin() + 1 + n_cores + n_ranks);
    const size_t first_kept = 1 + n_cores + n_ranks;
    const TTNetwork tt(shape_of(cores), x.size(0));
    const auto plan = ContractionPlan::parse(ctx->saved_data["plan"].toStringRef(), tt.net(), "");
    Evaluator ev(tt, x, scaled_cores(cores, ranks));
    ev.keep_all();
    for (size_t i = 0, pos = 0; i < masks.size(); ++i) {
      const auto n = static_cast<size_t>(labels[pos]);
      ev.kept()[static_cast<Mask>(masks[i])] =
          Labeled{saved[first_kept + i],
                  std::vector<int>(labels.begin() + pos + 1, labels.begin() + pos + 1 + n)};
      pos += 1 + n;
    }
    // Input edges: x, cores, ranks, bias. A core's gradient is needed for its rank vector too.
    auto rank_edge = [&](size_t k) { return 1 + n_cores + k; };
    std::vector<bool> needs(tt.net().operands(), false);
    needs[tt.x()] = ctx->needs_input_grad(0);
    for (size_t k = 0; k < n_cores; ++k)
      needs[k + 1] = ctx->needs_input_grad(k + 1) || (k < n_ranks && ctx->needs_input_grad(rank_edge(k)));
    std::vector<at::Tensor> grads(tt.net().operands());
    const at::Tensor& dy = grad_outputs[0];
    ev.gradient(plan.backward, plan.backward.leaves(), ev.output_gradient(dy), needs, grads);

    variable_list out{grads[tt.x()].defined() ? grads[tt.x()].view_as(x) : at::Tensor()};
    std::vector<at::Tensor> drank(n_ranks);
    for (size_t k = 0; k < n_cores; ++k) {
      at::Tensor g = grads[k + 1];
      if (g.defined()) g = g.view_as(cores[k]);
      if (k < n_ranks && g.defined()) {
        if (ctx->needs_input_grad(rank_edge(k))) drank[k] = (cores[k] * g).sum(at::IntArrayRef{0, 1});
        g = g * ranks[k].view({1, 1, -1});
      }
      out.push_back(ctx->needs_input_grad(k + 1) ? g : at::Tensor());
    }
    out.insert(out.end(), drank.begin(), drank.end());
    if (has_bias) out.push_back(dy.sum(0));
    out.emplace_back();  // the plan
    return out;
  }
};

}  // namespace

at::Tensor run_plan(const std::shared_ptr<const ContractionPlan>& plan, const at::Tensor& x,
                    const std::vector<at::Tensor>& cores) {
  return plan_path(plan, x, cores, {}, at::Tensor());
}

at::Tensor plan_path(const std::shared_ptr<const ContractionPlan>& plan, const at::Tensor& x,
                     const std::vector<at::Tensor>& cores, const std::vector<at::Tensor>& ranks,
                     const at::Tensor& bias) {
  if (!plan) throw Error("plan_path: no plan given");
  if (x.dim() != 2) throw Error("plan_path: x must be (tokens, in); flatten leading dimensions first");
  if (!ranks.empty() && ranks.size() + 1 != cores.size())
    throw Error("plan_path: " + std::to_string(cores.size()) + " cores need " +
                std::to_string(cores.size() - 1) + " rank vectors, got " + std::to_string(ranks.size()));
  std::vector<at::Tensor> bias_list;
  if (bias.defined()) bias_list.push_back(bias);
  return PlanFunction::apply(x, at::TensorList(cores), at::TensorList(ranks),
                             at::TensorList(bias_list), plan);
}

}  // namespace comera::contract
