#pragma once
// The "shapes" axis of a sweep: tensor shapes of the model's tensorized layers.
#include "search/sweep/sweep_spec.h"

namespace comera::sweep {

// One choice per entry: {"factorise": d} re-factorises every tensorized layer of the base
// experiment's model into d balanced modes per side (ModelKind::factorise: interior ranks as in
// the base, capped at their bounds); {"name": "...", "tensorized": {...}} replaces
// model.tensorized outright.
// `where` names the axis in errors.
std::vector<Choice> shape_choices(const nlohmann::json& entries, const nlohmann::json& base,
                                  const std::string& where);


}  // namespace comera::sweep
