// `comera export`: the results database as one flat CSV or JSON-lines table.
#include "core/util/error.h"
#include "core/util/output_file.h"
#include "search/cli/command.h"
#include "search/cli/db_option.h"
#include "search/store/export_table.h"
#include "search/store/studies.h"

#include <iostream>
#include <optional>

namespace comera::cli {
namespace {

int run(int argc, char** argv) {
  auto options = make_options("export",
                              "Export results as one flat table: a row per trial, or per trial "
                              "and epoch; the config flattened into config.* columns");
  add_db_option(options);
  options.add_options()("format", "csv or jsonl",
                        cxxopts::value<std::string>()->default_value("csv"))(
      "per", "epoch or trial", cxxopts::value<std::string>()->default_value("epoch"))(
      "study", "Only this study", cxxopts::value<std::string>()->default_value(""))(
      "o,output", "Output file (default: standard output)",
      cxxopts::value<std::string>()->default_value(""));
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const std::string format = (*parsed)["format"].as<std::string>();
  const std::string per = (*parsed)["per"].as<std::string>();
  if (format != "csv" && format != "jsonl")
    throw Error("--format " + format + " is not known: use csv or jsonl");
  if (per != "epoch" && per != "trial")
    throw Error("--per " + per + " is not known: use epoch or trial");
  const std::string output = (*parsed)["output"].as<std::string>();
  std::optional<OutputFile> file;
  if (!output.empty()) file.emplace(output, "--output", std::vector<std::string>{db_path(*parsed)});
  auto db = store::ResultsDb::open(db_path(*parsed), store::ResultsDb::Mode::ReadOnly);
  const auto& study = (*parsed)["study"].as<std::string>();
  if (!study.empty()) store::require_study(db, study);
  const auto table = store::export_table(
      db, per == "epoch" ? store::ExportGrain::Epoch : store::ExportGrain::Trial, study);
  const auto write = [&](std::ostream& out) {
    if (format == "csv")
      store::write_csv(out, table);
    else
      store::write_jsonl(out, table);
  };
  if (!file) {
    write(std::cout);
    return 0;
  }
  file->write_text(write);
  std::cerr << "wrote " << table.rows.size() << " rows x " << table.columns.size()
            << " columns to " << output << "\n";
  return 0;
}

Register reg("export", "Export results as flat CSV or JSON lines (per epoch or trial)", run);

}  // namespace
}  // namespace comera::cli
