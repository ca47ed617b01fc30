#pragma once
// Our figures beside the published ones: one row per table row of a paper spec, each metric
// column the mean over the study's complete trials that meet the row's and column's conditions
// (with the trial count when more than one), ratio columns divided row by row, and a "paper"
// column after every column with published figures.
#include "search/reproduce/paper_spec.h"
#include "search/store/results_db.h"
#include "search/sweep/published_figures.h"

#include <ostream>
#include <string>
#include <vector>

namespace comera::reproduce {

struct ComparisonTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

ComparisonTable comparison_table(store::ResultsDb& db, const PaperSpec& spec,
                                 sweep::PublishedFigures& figures);

void write_text(std::ostream& out, const ComparisonTable& table);    // aligned columns
void write_markdown(std::ostream& out, const ComparisonTable& table);  // a pipe table

}  // namespace comera::reproduce
