#include "search/reproduce/comparison_table.h"

#include "core/util/mean_error.h"
#include "search/store/export_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace comera::reproduce {

namespace {

std::string number_text(double x) {
  if (std::isnan(x)) return "nan";
  char text[32];
  std::snprintf(text, sizeof text, std::abs(x) >= 100 ? "%.0f" : "%.4g", x);
  return text;
}

using Cell = MeanError;

// Mean of `metric` (times scale), with its spread, over the complete trials among `rows` meeting `where`.
Cell mean_of(const store::FlatTable& trials, std::vector<size_t> rows,
             const std::vector<pareto::Condition>& where, const std::string& metric, double scale) {
  if (trials.rows.empty()) return {};
  const auto metric_column = std::find(trials.columns.begin(), trials.columns.end(),
                                       "objective." + metric);
  if (metric_column == trials.columns.end()) return {};
  const size_t column = static_cast<size_t>(metric_column - trials.columns.begin());
  const auto matching = pareto::filter_rows(trials, where);
  std::vector<double> values;
  for (size_t r : rows) {
    if (!std::binary_search(matching.begin(), matching.end(), r)) continue;
    const double v = pareto::cell_number(trials.rows[r][column]);
    if (!std::isnan(v)) values.push_back(v * scale);
  }
  return mean_error(values);
}

}  // namespace

ComparisonTable comparison_table(store::ResultsDb& db, const PaperSpec& spec,
                                 sweep::PublishedFigures& figures) {
  const store::FlatTable all = store::export_table(db, store::ExportGrain::Trial, spec.name);
  const auto complete = pareto::filter_rows(all, {pareto::parse_condition("state=complete")});

  ComparisonTable table;
  table.header.push_back("");
  for (const auto& c : spec.columns) {
    table.header.push_back(c.label);
    if (!c.published.empty()) table.header.push_back("paper");
  }
  for (const auto& row : spec.rows) {
    const auto in_row = pareto::filter_rows(all, row.where);
    std::vector<size_t> rows;
    std::set_intersection(complete.begin(), complete.end(), in_row.begin(), in_row.end(),
                          std::back_inserter(rows));
    std::map<std::string, Cell> cells;
    for (const auto& c : spec.columns)
      if (!c.metric.empty()) cells[c.label] = mean_of(all, rows, c.where, c.metric, c.scale);
    std::vector<std::string> out = {row.label};
    for (const auto& c : spec.columns) {
      std::string text = "-";
      if (!c.metric.empty()) {
        const Cell& cell = cells[c.label];
        if (cell.count)
          text = number_text(cell.mean) + (cell.count > 1 ? " ± " + number_text(cell.standard_error) + " (n=" +
                                                                std::to_string(cell.count) + ")"
                                                          : "");
      } else if (cells[c.numerator].count && cells[c.denominator].count) {
        text = number_text(cells[c.numerator].mean / cells[c.denominator].mean);
      }
      out.push_back(text);
      if (c.published.empty()) continue;
      const nlohmann::json* figure = c.published.contains(row.label) ? &c.published[row.label]
                                     : c.published.contains("*")     ? &c.published["*"]
                                                                     : nullptr;
      out.push_back(figure ? sweep::figure_text(figures.resolve(
                                 *figure, "table column '" + c.label + "', row '" + row.label + "'"))
                           : "");
    }
    table.rows.push_back(out);
  }
  return table;
}

void write_text(std::ostream& out, const ComparisonTable& table) {
  std::vector<size_t> width(table.header.size(), 0);
  auto measure = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) width[i] = std::max(width[i], cells[i].size());
  };
  measure(table.header);
  for (const auto& row : table.rows) measure(row);
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      const std::string pad(width[i] - cells[i].size(), ' ');
      out << (i ? "  " : "") << (i ? pad + cells[i] : cells[i] + pad);
    }
    out << "\n";
  };
  line(table.header);
  for (const auto& row : table.rows) line(row);
}

void write_markdown(std::ostream& out, const ComparisonTable& table) {
  out << "|";
  for (const auto& h : table.header) out << " " << h << " |";
  out << "\n|";
  for (size_t i = 0; i < table.header.size(); ++i) out << (i ? "---:|" : "---|");
  out << "\n";
  for (const auto& row : table.rows) {
    out << "|";
    for (const auto& cell : row) out << " " << cell << " |";
    out << "\n";
  }
}

}  // namespace comera::reproduce
