#include "search/pareto/front_report.h"

#include "search/store/flat_table.h"
#include "search/store/readable_cell.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace comera::pareto {

namespace {

std::string short_number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", x);
  return text;
}

// The rows to show: the front (best first in the first objective), or every trial with a
// "front" column.
store::FlatTable rows(const FrontResult& result, bool all) {
  if (!all) return front_rows(result);
  store::FlatTable table = result.trials;
  table.columns.insert(table.columns.begin() + 1, "front");
  for (size_t i = 0; i < table.rows.size(); ++i)
    table.rows[i].insert(table.rows[i].begin() + 1, result.on_front[i] ? "*" : "");
  return table;
}

// The columns a reader needs, rounded: what each trial is and was asked, the objectives, the
// headline metrics and how it ended. The late-stage point columns are in "target"; every
// column is in --format csv and json.
store::FlatTable readable(const store::FlatTable& table, const FrontResult& result) {
  std::vector<std::string> keep = {"trial", "id", "front", "kind", "target"};
  for (const auto& c : result.point)
    if (c != "loss_target" && c != "size_ratio" && c != "size_target") keep.push_back(c);
  for (const auto& o : result.objectives) keep.push_back(o.name);
  for (const char* c : {"accuracy", "eval_loss", "size", "compression", "size_vs_s0", "loss_vs_l0", "notes", "proposed"})
    keep.push_back(c);
  store::FlatTable out;
  std::vector<size_t> from;
  for (const auto& c : keep) {
    const auto it = std::find(table.columns.begin(), table.columns.end(), c);
    if (it == table.columns.end() ||
        std::find(out.columns.begin(), out.columns.end(), c) != out.columns.end())
      continue;
    out.columns.push_back(c == "size_vs_s0" ? "size/S0" : c == "loss_vs_l0" ? "L-L0" : c);
    from.push_back(it - table.columns.begin());
  }
  for (const auto& row : table.rows) {
    std::vector<nlohmann::json> cells;
    for (size_t k = 0; k < from.size(); ++k)
      cells.push_back(store::readable_cell(table.columns[from[k]], row[from[k]]));
    out.rows.push_back(std::move(cells));
  }
  // Columns empty in every row (no late trials, nothing lost) say nothing.
  for (size_t k = out.columns.size(); k-- > 0;)
    if (std::all_of(out.rows.begin(), out.rows.end(),
                    [&](const auto& row) { return row[k].template get<std::string>().empty(); })) {
      out.columns.erase(out.columns.begin() + k);
      for (auto& row : out.rows) row.erase(row.begin() + k);
    }
  return out;
}

}  // namespace

std::string front_summary(const FrontResult& result) {
  size_t on_front = 0;
  for (bool f : result.on_front) on_front += f;
  std::ostringstream s;
  s << "study " << result.study << ": " << result.values.size() << " complete trials";
  std::string others;
  for (const auto& [state, count] : result.left_out)
    others += (others.empty() ? "" : ", ") + std::to_string(count) + " " + state;
  if (!others.empty()) s << " (left out: " << others << ")";
  s << ", " << on_front << " on the Pareto front of";
  for (size_t k = 0; k < result.objectives.size(); ++k)
    s << (k ? ", " : " ") << result.objectives[k].name << " ("
      << (result.objectives[k].minimize ? "min" : "max") << ")";
  if (result.reference.empty()) return s.str();
  s << "\nhypervolume " << short_number(result.hypervolume) << " against the reference point (";
  for (size_t k = 0; k < result.reference.size(); ++k)
    s << (k ? ", " : "") << short_number(result.reference[k]);
  s << ")";
  return s.str();
}

void write_front_text(std::ostream& out, const FrontResult& result, bool all) {
  out << front_summary(result) << "\n\n";
  store::write_text(out, readable(rows(result, all), result));
  if (all && !result.pruned.empty()) {
    out << "\npruned (never on the front; `comera sweep SPEC --resume-pruned` runs them on):\n";
    for (const auto& p : result.pruned) out << "  #" << p.number << " (id " << p.id << ") " << p.why << "\n";
  }
  out << "\n" << (all ? "* = on the Pareto front; " : "")
      << "trial: its number in the study (as reasons name it); id: for `comera runs show ID`; size/S0: the late stage's final size over its target S0 (1 = reached); "
         "every column: --format csv or json\n";
}

void write_front_csv(std::ostream& out, const FrontResult& result, bool all) {
  store::write_csv(out, rows(result, all));
}

nlohmann::json front_json(const FrontResult& result, bool all) {
  nlohmann::json objectives = nlohmann::json::array();
  for (const auto& o : result.objectives) objectives.push_back(o.name + (o.minimize ? ":min" : ":max"));
  nlohmann::json reference = nlohmann::json::array();
  for (double r : result.reference) reference.push_back(store::FlatTable::real(r));
  nlohmann::json pruned = nlohmann::json::array();
  for (const auto& p : result.pruned) pruned.push_back({{"trial", p.number}, {"id", p.id}, {"decision", p.why}});
  return {{"study", result.study},
          {"objectives", objectives},
          {"complete", result.values.size()},
          {"left_out", result.left_out},
          {"pruned", pruned},
          {"reference", reference},
          {"hypervolume", store::FlatTable::real(result.hypervolume)},
          {all ? "trials" : "front", store::to_json(rows(result, all))}};
}

}  // namespace comera::pareto
