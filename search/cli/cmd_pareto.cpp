// `comera pareto`: the non-dominated trials of a study, their hypervolume, and a plot.
#include "core/util/error.h"
#include "core/util/output_file.h"
#include "search/cli/command.h"
#include "search/cli/db_option.h"
#include "search/pareto/front_report.h"

#include <algorithm>
#include <iostream>
#include <optional>

namespace comera::cli {
namespace {

int run(int argc, char** argv) {
  auto options = make_options(
      "pareto", "The Pareto front of a study's complete trials, with its hypervolume");
  add_db_option(options);
  options.add_options()("study", "Study name", cxxopts::value<std::string>())(
      "objectives", "name:min|max,... (default: the study's own)",
      cxxopts::value<std::string>()->default_value(""))(
      "where", "COLUMN OP VALUE (OP: = != < <= > >=); a comma list or repeated to combine, e.g. --where kind=late",
      cxxopts::value<std::string>())(
      "ref", "Reference point for the hypervolume, one value per objective (default: the worst "
             "finite values plus 10% of their range)",
      cxxopts::value<std::string>())(
      "format", "table, csv or json", cxxopts::value<std::string>()->default_value("table"))(
      "all", "Every complete trial, with a 'front' column, not just the front")(
      "plot", "Draw the first two objectives into this PNG (front, dominated trials, published "
              "figures)", cxxopts::value<std::string>()->default_value(""))(
      "json", "The same as --format json");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  if (!r.count("study")) throw Error("give --study NAME (comera runs list shows the studies)");
  const std::string format = r.count("json") ? "json" : r["format"].as<std::string>();
  if (format != "table" && format != "csv" && format != "json")
    throw Error("--format " + format + " is not known: use table, csv or json");

  pareto::FrontQuery query;
  query.study = r["study"].as<std::string>();
  query.objectives = r["objectives"].as<std::string>();
  if (r.count("where"))
    for (const auto& text : string_list_flag(r, "where"))
      query.where.push_back(pareto::parse_condition(text));
  if (r.count("ref")) query.reference = number_list_flag(r, "ref");

  std::optional<OutputFile> png;
  if (!r["plot"].as<std::string>().empty())
    png.emplace(r["plot"].as<std::string>(), "--plot", std::vector<std::string>{db_path(r)});
  auto db = store::ResultsDb::open(db_path(r), store::ResultsDb::Mode::ReadOnly);
  const auto result = pareto::study_front(db, query);
  // A plot that cannot be drawn is refused before anything is printed.
  std::optional<pareto::FrontPlot> plot;
  if (png) {
    plot = pareto::front_plot(result);
    pareto::require_points(*plot);
  }
  const bool all = r.count("all") > 0;
  const bool on_front = std::find(result.on_front.begin(), result.on_front.end(), true) != result.on_front.end();
  if (!query.reference.empty() && on_front && result.hypervolume == 0)
    std::cerr << "note: no trial on the front is better than --ref in every objective, so the hypervolume is "
                 "0: give a reference point worse than every trial (e.g. above the largest size, below the "
                 "lowest accuracy)\n";
  if (format == "table")
    pareto::write_front_text(std::cout, result, all);
  else if (format == "csv")
    pareto::write_front_csv(std::cout, result, all);
  else
    std::cout << pareto::front_json(result, all).dump(2) << "\n";

  if (png) {
    png->write([&](const std::string& file) { pareto::write_png(*plot, file); });
    std::cerr << "wrote " << png->path() << "\n";
  }
  return 0;
}

Register reg("pareto", "Pareto front of a study, hypervolume, plot (--plot FILE.png)", run);

}  // namespace
}  // namespace comera::cli
