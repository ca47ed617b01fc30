#include "core/training/train_config.h"

#include "core/training/optimizer_kind.h"
#include "core/util/config_reader.h"
#include "core/util/device.h"
#include "core/util/error.h"

#include <nlohmann/json.hpp>

namespace comera {

namespace {

const char* schedule_name(ScheduleKind k) {
  switch (k) {
    case ScheduleKind::Constant: return "constant";
    case ScheduleKind::Linear: return "linear";
    case ScheduleKind::Cosine: return "cosine";
  }
  return "";
}

const char* truncate_name(TruncateWhen w) {
  switch (w) {
    case TruncateWhen::Never: return "never";
    case TruncateWhen::Epoch: return "epoch";
    case TruncateWhen::Steps: return "steps";
  }
  return "";
}

nlohmann::json optimizer_json(const OptimizerConfig& o) {
  nlohmann::json j = {{"kind", o.kind}, {"lr_cores", o.lr_cores}, {"lr_ranks", o.lr_ranks},
                      {"lr_other", o.lr_other}, {"weight_decay", o.weight_decay}};
  j.update(o.complete_settings());
  return j;
}

// Settings of another optimiser kind are errors, not silently ignored.
OptimizerConfig read_optimizer(const ConfigReader& o) {
  OptimizerConfig x;
  x.kind = o.choice("kind", x.kind, optimizer_kind_names());
  x.lr_cores = o.number("lr_cores", x.lr_cores);
  x.lr_ranks = o.number("lr_ranks", x.lr_ranks);
  x.lr_other = o.number("lr_other", x.lr_other);
  x.weight_decay = o.number("weight_decay", x.weight_decay);
  x.settings = find_optimizer_kind(x.kind).read(o);
  o.finish();
  return x;
}

}  // namespace

nlohmann::json OptimizerConfig::complete_settings() const {
  const ConfigReader r(settings.is_null() ? nlohmann::json::object() : settings, "training.optimizer");
  auto out = find_optimizer_kind(kind).read(r);
  r.finish();
  return out;
}

nlohmann::json TrainConfig::to_json() const {
  nlohmann::json j = {
      {"task", task.kind}, {"device", device}, {"contraction", contraction},
      {"epochs", epochs}, {"batch_size", batch_size}, {"eval_batch_size", eval_batch_size},
      {"max_steps", max_steps}, {"seed", seed}, {"clip_grad_norm", clip_grad_norm},
      {"optimizer", optimizer_json(optimizer)},
      {"schedule", {{"kind", schedule_name(schedule.kind)}, {"warmup_steps", schedule.warmup_steps},
                    {"min_factor", schedule.min_factor}}},
      {"size_surrogate", size_surrogate == SurrogateKind::Mean ? "mean" : "weighted"},
      {"early_stage", {{"gamma", early.gamma}, {"beta", early.beta}}},
      {"truncation", {{"when", truncate_name(truncation.when)},
                      {"every_steps", truncation.every_steps}, {"fold", truncation.fold}}},
      {"checkpoint_every_steps", checkpoint_every_steps}};
  if (task.kind == "masked_lm") j["mask_probability"] = task.mask_probability;
  if (!init_from.empty()) j["init_from"] = init_from;
  // Written only when not the default, so the records of runs made before the setting existed
  // (trial identities, checkpoints) still match.
  if (precision != Precision::Fp32) j["precision"] = precision_name(precision);
  // Only when set, so the configs (and hashes) of single-process runs stay what they were.
  if (nproc != 1) j["nproc"] = nproc;
  // Only when set, so that other configs (and their hashes) stay what they were.
  if (!fixed_ranks.empty()) j["fixed_ranks"] = fixed_ranks;
  for (const auto& p : length_phases)
    j["length_phases"].push_back(
        {{"start_epoch", p.start_epoch}, {"start_step", p.start_step}, {"max_length", p.max_length}});
  if (late.enabled)
    j["late_stage"] = {{"start_epoch", late.start_epoch}, {"start_step", late.start_step},
                       {"loss_target", late.loss_target}, {"size_target", late.size_target},
                       {"size_ratio", late.size_ratio}, {"omega", {late.omega_loss, late.omega_size}},
                       {"rho", late.rho}, {"lr_ranks", late.lr_ranks}};
  // Only when set: checkpoints of gradient-controlled runs keep their identity.
  if (late.enabled && late.control == LateControl::Cut) {
    auto& l = j["late_stage"];
    l["control"] = "cut";
    l["cut_every_steps"] = late.cut_every_steps;
    l["cut_fraction"] = late.cut_fraction;
  }
  return j;
}

nlohmann::json before_late(nlohmann::json training) {
  if (auto it = training.find("late_stage"); it != training.end())
    *it = {{"start_epoch", it->value("start_epoch", int64_t{0})}, {"start_step", it->value("start_step", int64_t{0})}};
  return training;
}

TaskSpec read_task_spec(const ConfigReader& r) {
  TaskSpec task;
  task.kind = r.string("task", task.kind);
  task.mask_probability = r.number("mask_probability", task.mask_probability, 1e-6, 1);
  return task;
}

int64_t TrainConfig::length_at(int64_t epoch, int64_t step) const {
  int64_t length = 0;
  for (const auto& p : length_phases)
    if (p.start_step > 0 ? step >= p.start_step : epoch >= p.start_epoch) length = p.max_length;
  return length;
}

namespace {

std::vector<LengthPhase> read_length_phases(const ConfigReader& r, int64_t epochs) {
  const auto& list = r.value("length_phases");
  const auto key = r.key_path("length_phases");
  if (!list.is_array() || list.empty())
    throw Error(key + ": expected a list of phases, e.g. [{\"max_length\": 128}, "
                "{\"start_epoch\": 3, \"max_length\": 512}]");
  std::vector<LengthPhase> phases;
  for (size_t i = 0; i < list.size(); ++i) {
    const ConfigReader p(list[i], key + "[" + std::to_string(i) + "]");
    LengthPhase x;
    x.max_length = p.integer("max_length", 0, 4);
    if (!p.has("max_length")) throw Error(p.path() + ": say the phase's max_length (e.g. 128)");
    x.start_epoch = p.integer("start_epoch", 0, 0);
    x.start_step = p.integer("start_step", 0, 0);
    // A recorded phase (to_json) writes both, the unused one 0.
    if (x.start_epoch > 0 && x.start_step > 0)
      throw Error(p.path() + ": give start_epoch or start_step, not both");
    p.finish();
    if (i == 0 && (x.start_epoch != 0 || x.start_step != 0))
      throw Error(p.path() + ": the first phase starts the run (remove its start_epoch / start_step)");
    if (i > 0) {
      const auto& prev = phases.back();
      const bool steps = x.start_step > 0, prev_steps = prev.start_step > 0;
      if (!p.has("start_epoch") && !p.has("start_step"))
        throw Error(p.path() + ": say when the phase starts (add start_epoch or start_step)");
      if (i > 1 && steps != prev_steps)
        throw Error(p.path() + ": count the phases' starts all in epochs or all in steps");
      if (steps ? x.start_step <= prev.start_step : x.start_epoch <= prev.start_epoch)
        throw Error(p.path() + ": starts no later than the phase before it (phases go in order)");
      if (!steps && x.start_epoch >= epochs)
        throw Error(p.key_path("start_epoch") + ": " + std::to_string(x.start_epoch) +
                    " is not before training.epochs " + std::to_string(epochs));
    }
    phases.push_back(x);
  }
  return phases;
}

}  // namespace

TrainConfig read_train_config(const ConfigReader& r) {
  TrainConfig c;
  c.task = read_task_spec(r);
  c.device = r.string("device", c.device);
  c.device = parse_device(c.device, r.key_path("device")).str();
  c.nproc = r.integer("nproc", c.nproc, 1);
  c.contraction = r.choice("contraction", c.contraction,
                           {"stored", "tuned", "merged", "core-by-core", "reconstruct"});
  c.precision = parse_precision(r.choice("precision", "fp32", {"fp32", "bf16"}), r.key_path("precision"));
  require_precision(c.precision, parse_device(c.device, r.key_path("device")), r.key_path("precision"));
  c.init_from = r.string("init_from", c.init_from);
  c.epochs = r.integer("epochs", c.epochs, 1);
  c.batch_size = r.integer("batch_size", c.batch_size, 1);
  c.eval_batch_size = r.integer("eval_batch_size", c.eval_batch_size, 1);
  c.max_steps = r.integer("max_steps", c.max_steps, 0);
  c.seed = static_cast<uint64_t>(r.integer("seed", 0, 0));
  c.clip_grad_norm = r.number("clip_grad_norm", c.clip_grad_norm);
  c.checkpoint_every_steps = r.integer("checkpoint_every_steps", c.checkpoint_every_steps, 0);
  c.size_surrogate =
      parse_surrogate_kind(r.choice("size_surrogate", "weighted", {"weighted", "mean"}));

  if (r.has("optimizer")) c.optimizer = read_optimizer(r.object("optimizer"));
  if (r.has("schedule")) {
    const auto s = r.object("schedule");
    const auto kind = s.choice("kind", "constant", {"constant", "linear", "cosine"});
    c.schedule.kind = kind == "linear"   ? ScheduleKind::Linear
                      : kind == "cosine" ? ScheduleKind::Cosine
                                         : ScheduleKind::Constant;
    c.schedule.warmup_steps = s.integer("warmup_steps", 0, 0);
    c.schedule.min_factor = s.number("min_factor", 0, 0, 1);
    s.finish();
  }
  if (r.has("early_stage")) {
    const auto e = r.object("early_stage");
    c.early.gamma = e.number("gamma", c.early.gamma);
    c.early.beta = e.number("beta", c.early.beta);
    e.finish();
  }
  if (r.has("late_stage")) {
    const auto l = r.object("late_stage");
    auto& x = c.late;
    x.enabled = true;
    x.start_epoch = l.integer("start_epoch", 0, 0);
    x.start_step = l.integer("start_step", 0, 0);
    if (!l.has("start_epoch") && !l.has("start_step"))
      throw Error(l.path() + ": say when the late stage starts (add start_epoch or start_step)");
    // A recorded late stage holds both, the unused one 0.
    if (x.start_epoch > 0 && x.start_step > 0)
      throw Error(l.path() + ": start_epoch " + std::to_string(x.start_epoch) + " and start_step " +
                  std::to_string(x.start_step) + " both say when the late stage starts: give one");
    x.loss_target = l.number("loss_target", x.loss_target);
    x.size_target = l.number("size_target", 0);
    x.size_ratio = l.number("size_ratio", x.size_ratio, 0, 1);
    // The late stage as recorded (to_json) is known by its "omega" pair: it writes both sizes,
    // size_target 0 when the ratio applies, and the omegas as [loss, size].
    const bool recorded = l.has("omega");
    if (l.has("size_target") && l.has("size_ratio") && !recorded)
      throw Error(l.path() + ": give size_target (absolute) or size_ratio, not both");
    x.omega_loss = l.number("omega_loss", x.omega_loss);
    x.omega_size = l.number("omega_size", x.omega_size);
    if (recorded) {
      if (l.has("omega_loss") || l.has("omega_size"))
        throw Error(l.key_path("omega") + ": give omega_loss and omega_size, or the recorded pair omega, not both");
      const auto& omega = l.value("omega");
      if (!omega.is_array() || omega.size() != 2 || !omega[0].is_number() || !omega[1].is_number())
        throw Error(l.key_path("omega") + ": expected the recorded pair [omega_loss, omega_size]");
      x.omega_loss = omega[0].get<double>(), x.omega_size = omega[1].get<double>();
    }
    x.lr_ranks = l.number("lr_ranks", x.lr_ranks);
    x.rho = l.number("rho", x.rho);
    const auto control = l.choice("control", "gradient", {"gradient", "cut"});
    x.control = control == "cut" ? LateControl::Cut : LateControl::Gradient;
    if (x.control == LateControl::Gradient && (l.has("cut_every_steps") || l.has("cut_fraction")))
      throw Error(l.path() + ": cut_every_steps and cut_fraction apply to control \"cut\" (set "
                  "control to \"cut\", or remove them)");
    x.cut_every_steps = l.integer("cut_every_steps", x.cut_every_steps, 2);
    x.cut_fraction = l.number("cut_fraction", x.cut_fraction, 0, 1);
    if (x.cut_fraction <= 0)
      throw Error(l.key_path("cut_fraction") + ": must be above 0 (0.5 closes half the gap per cut)");
    l.finish();
    if (x.start_step == 0 && x.start_epoch >= c.epochs)
      throw Error(l.key_path("start_epoch") + ": " + std::to_string(x.start_epoch) +
                  " is not before training.epochs " + std::to_string(c.epochs) +
                  " (lower it or raise epochs)");
  }
  if (r.has("length_phases")) c.length_phases = read_length_phases(r, c.epochs);
  if (r.has("fixed_ranks")) {
    const auto f = r.object("fixed_ranks");
    for (const auto& item : r.value("fixed_ranks").items()) {
      auto ranks = f.integers(item.key(), 0);
      if (ranks.size() < 2 || ranks.front() != 1 || ranks.back() != 1)
        throw Error(f.key_path(item.key()) + ": give the layer's whole rank list, boundary 1s included, e.g. [1, 4, 8, 1]");
      c.fixed_ranks[item.key()] = std::move(ranks);
    }
    if (c.fixed_ranks.empty()) throw Error(f.path() + ": name every tensorized layer's ranks, or leave it out");
  }
  if (r.has("truncation")) {
    const auto t = r.object("truncation");
    const auto when = t.choice("when", "epoch", {"never", "epoch", "steps"});
    c.truncation.when = when == "never"   ? TruncateWhen::Never
                        : when == "steps" ? TruncateWhen::Steps
                                          : TruncateWhen::Epoch;
    c.truncation.every_steps = t.integer("every_steps", 0, 0);
    if (c.truncation.when == TruncateWhen::Steps && c.truncation.every_steps == 0)
      throw Error(t.key_path("every_steps") + ": required when truncation.when is \"steps\" "
                  "(e.g. 500)");
    c.truncation.fold = t.boolean("fold", false);
    // Folding sets every d back to 1, undoing each entry's way down to the threshold.
    if (c.truncation.fold && c.truncation.when != TruncateWhen::Never && (c.early.gamma > 0 || c.late.enabled))
      throw Error(t.key_path("fold") + ": folding d into the cores sets every rank entry back to 1 at each "
                  "truncation, so none ever falls under the threshold and no rank is pruned while early_stage.gamma "
                  "or a late_stage shrinks the ranks: leave fold out (it changes no output)");
    t.finish();
  }
  if (!c.fixed_ranks.empty()) {
    std::string clash;
    auto add = [&clash](const std::string& what) { clash += (clash.empty() ? "" : "; ") + what; };
    if (c.early.gamma != 0) add("early_stage.gamma is " + std::to_string(c.early.gamma));
    if (c.late.enabled) add("late_stage is set");
    if (c.truncation.when != TruncateWhen::Never) add("truncation.when is not \"never\"");
    if (c.optimizer.lr_ranks != 0) add("optimizer.lr_ranks is " + std::to_string(c.optimizer.lr_ranks));
    if (!c.init_from.empty()) add("init_from is set");
    if (!clash.empty())
      throw Error(r.key_path("fixed_ranks") + " keeps every rank, but " + clash +
                  ": set early_stage.gamma to 0, leave out late_stage and init_from, set truncation.when to "
                  "\"never\" and optimizer.lr_ranks to 0 (comera train --fixed-ranks FILE does all of this)");
  }
  r.finish();
  return c;
}

}  // namespace comera
