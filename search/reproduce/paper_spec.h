#pragma once
// A reproduction of one of the paper's tables (experiments/paper/NAME.json): the sweep that
// produces our figures in the paper's configuration, how to scale it down for the default run,
// and the table that sets our figures beside the published ones. Any experiment a sweep can run
// (training, or single-step timing) fits, so new tables join by adding a file.
#include "search/pareto/row_filter.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace comera::reproduce {

struct TableRow {
  std::string label;
  std::vector<pareto::Condition> where;  // the trials this row averages over
};

struct TableColumn {
  std::string label;
  std::string metric;                    // an objective of the trials; or
  std::string numerator, denominator;    // the ratio of two other columns of the same row
  std::vector<pareto::Condition> where;  // further conditions for this column
  double scale = 1;                      // shown as metric x scale (e.g. 100 for percent)
  nlohmann::json published = nlohmann::json::object();  // row label (or "*") -> figure
};

struct PaperSpec {
  std::string file, name, title;
  nlohmann::json sweep;        // the sweep spec as written (the paper's configuration)
  std::string scaled_note;     // what the default run scales down
  nlohmann::json scaled_set;   // {"dotted.path": value} patches to the sweep spec for it
  std::vector<TableRow> rows;
  std::vector<TableColumn> columns;
  std::vector<std::string> notes;
};

// NAME: a file in experiments/paper/ (without .json), or a path. Errors name the key.
PaperSpec load_paper_spec(const std::string& name_or_file);

// The sweep spec to run: the paper's configuration, or (full = false) the scaled-down one; the
// base experiment is read in (relative to the paper spec), the study named after the table.
nlohmann::json sweep_json(const PaperSpec& spec, bool full);

// The paper specs in experiments/paper/, by name.
std::vector<std::string> list_paper_specs();

}  // namespace comera::reproduce
