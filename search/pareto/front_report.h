#pragma once
// How a Pareto front is shown: an aligned table with a summary line (numbers to 4 significant
// digits), CSV, or one JSON document with the reference point and hypervolume.
#include "search/pareto/study_front.h"

#include <nlohmann/json.hpp>

#include <ostream>

namespace comera::pareto {

// The summary line: counts, reference point and hypervolume.
std::string front_summary(const FrontResult& result);

// all: every complete trial with a "front" column ("*" on the front); else the front only.
void write_front_text(std::ostream& out, const FrontResult& result, bool all);
void write_front_csv(std::ostream& out, const FrontResult& result, bool all);
nlohmann::json front_json(const FrontResult& result, bool all);

}  // namespace comera::pareto
