#pragma once
// The training methods users compare (docs/baselines.md), named by one experiment key:
// "method": "dense" | "tt" | "galore" | "lte" | "lowrank", with each baseline's settings in
// "method_settings": {"galore": {...}, "lte": {...}, "lowrank": {...}}; any method's entry
// ("dense" and "tt" included) may hold "optimizer": {AdamW's keys} laid over training.optimizer
// for that build, since a dense model and its tensorized twin rarely train best at the same
// rates. A method rewrites the model section (a request the model kind carries out:
// ModelKind::apply_method) and the optimiser section into their explicit form, so everything
// downstream (trainer, database, sweeps) sees ordinary settings; an experiment without
// "method" is left as written.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace comera {

// "dense", "tt", "galore", "lte", "lowrank".
const std::vector<std::string>& method_names();

// The experiment with its "method" applied (idempotent); for a transformer:
// - dense: every layer dense, AdamW (a GaLore optimiser becomes AdamW);
// - tt: the model's tensorized layers as written (it must have some);
// - galore: dense layers, optimiser galore (rank, update_proj_gap, scale);
// - lte: the attention and FFN linears LTE (rank, heads, alpha, merge_steps);
// - lowrank: the attention and FFN linears W = A·B (rank).
// A model kind without baselines refuses every method.
// Every method but tt drops training.late_stage (CoMERA's size stage has nothing to act on).
// Errors name the key and the fix.
nlohmann::json apply_method(nlohmann::json experiment);

// The experiment's dense baseline, as `comera train --dense` and a sweep's dense trials run it:
// every layer dense, no late stage, training.init_from read as its dense twin, and
// method_settings.dense.optimizer laid over the optimiser. An experiment whose method is a
// build other than tt or dense is refused.
nlohmann::json dense_build(nlohmann::json experiment);

}  // namespace comera
