// `comera reproduce NAME`: runs one of the paper's tables (scaled down, or --full) as a sweep and
// prints our figures beside the published ones; the table also goes to results/reproduce/.
#include "core/util/error.h"
#include "core/util/format.h"
#include "core/util/output_file.h"
#include "search/cli/command.h"
#include "search/cli/stop_signals.h"
#include "search/cli/training_output.h"
#include "search/reproduce/comparison_table.h"
#include "search/reproduce/paper_spec.h"
#include "search/sweep/published_figures.h"
#include "search/sweep/sweep_runner.h"
#include "search/sweep/sweep_spec.h"

#include <iostream>

namespace comera::cli {
namespace {

int run(int argc, char** argv) {
  auto options = make_options(
      "reproduce",
      "Reproduce one of the paper's tables (experiments/paper/NAME.json): runs its sweep, scaled\n"
      "down to minutes on 2 cores by default or in the paper's configuration with --full, then\n"
      "prints our figures beside the published ones and writes the table as markdown. Running\n"
      "it again resumes the sweep.");
  options.add_options()("name", "Table name (file in experiments/paper/) or a spec path",
                        cxxopts::value<std::string>())(
      "full", "The paper's full configuration (hours to days on a CPU)")(
      "seeds", "Run every trial under this many seeds (the experiment's seed and the next ones); the "
               "table then shows mean ± standard error (n)",
      cxxopts::value<int64_t>()->default_value("1"))(
      "db", "Results database (default results/reproduce/NAME[_full][_seedsN].db)",
      cxxopts::value<std::string>()->default_value(""))(
      "reference", "Published figures (default experiments/paper/published_figures.json)",
      cxxopts::value<std::string>()->default_value(sweep::default_figures_file()))(
      "out", "Markdown table (default results/reproduce/NAME[_full][_seedsN].md)",
      cxxopts::value<std::string>()->default_value(""))(
      "list", "List the tables")("json", "With --list: the tables as JSON")(
      "quiet", "No per-step progress line");
  options.parse_positional({"name"});
  options.positional_help("NAME");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  if (r.count("list") || !r.count("name")) {
    nlohmann::json tables = nlohmann::json::array();
    for (const auto& name : reproduce::list_paper_specs()) {
      const auto spec = reproduce::load_paper_spec(name);
      tables.push_back({{"name", name}, {"title", spec.title}, {"file", spec.file}});
      if (!r.count("json")) std::cout << name << "  " << spec.title << "\n";
    }
    if (r.count("json")) std::cout << tables.dump(2) << "\n";
    return r.count("list") ? 0 : 1;
  }
  const auto spec = reproduce::load_paper_spec(r["name"].as<std::string>());
  const bool full = r.count("full") > 0;
  const int64_t seeds = r["seeds"].as<int64_t>();
  if (seeds < 1) throw Error("--seeds " + std::to_string(seeds) + ": give 1 or more");
  // Runs under several seeds keep a database of their own, so that no row mixes them with a
  // single run's trials.
  const std::string stem = "results/reproduce/" + spec.name + (full ? "_full" : "") +
                           (seeds > 1 ? "_seeds" + std::to_string(seeds) : "");
  const std::string db_file = r["db"].as<std::string>().empty() ? stem + ".db" : r["db"].as<std::string>();
  const std::string md_file = r["out"].as<std::string>().empty() ? stem + ".md" : r["out"].as<std::string>();
  const std::string reference = r["reference"].as<std::string>();
  sweep::PublishedFigures figures(reference);
  figures.load();  // before the runs, which may take hours

  const std::string run_note =
      full ? std::string("the paper's configuration (--full)")
           : "scaled down: " + (spec.scaled_note.empty() ? std::string("nothing") : spec.scaled_note) +
                 " (--full runs the paper's configuration)";
  std::cerr << spec.title << "\nrun: " << run_note << std::endl;
  auto sweep_json = reproduce::sweep_json(spec, full);
  if (seeds > 1) {
    auto& axes = sweep_json["axes"];
    if (axes.contains("seeds") || axes.contains("repeats"))
      throw Error(spec.file + ": its sweep sets its own seeds (axes.seeds or axes.repeats): leave out --seeds");
    axes["repeats"] = seeds;
  }
  const auto sweep_spec = sweep::parse_sweep_spec(sweep_json, spec.file, reference);
  auto reads = sweep::sweep_inputs(sweep_spec, db_file);
  reads.push_back(reference);
  const OutputFile md(md_file, "--out", reads);
  sweep::SweepOptions so;
  so.db_path = db_file;
  ProgressLine line(!r.count("quiet"), true);
  so.trials = trial_reporting(line);
  so.on_message = so.trials.on_message;
  so.trials.stop = &stop_on_signals();
  const auto report = sweep::run_sweep(sweep_spec, so);
  std::cerr << "sweep " << report.study << ": " << sweep::describe_states(report) << "; ran "
            << report.ran << " in " << format_duration(report.seconds) << std::endl;
  if (stop_signal() != 0) {
    std::cerr << "stopped by signal " << stop_signal() << ": run the same command to go on" << std::endl;
    return signal_exit_code();
  }

  auto db = store::ResultsDb::open(db_file, store::ResultsDb::Mode::ReadOnly);
  const auto table = reproduce::comparison_table(db, spec, figures);
  std::cout << "\n" << spec.title << "\n(" << run_note << ")\n\n";
  reproduce::write_text(std::cout, table);
  for (const auto& note : spec.notes) std::cout << "- " << note << "\n";

  md.write_text([&](std::ostream& out) {
    out << "# " << spec.title << "\n\nRun: " << run_note << ". Trials: " << sweep::describe_states(report)
        << ", in `" << db_file << "` (study `" << spec.name << "`). Published figures: `" << reference
        << "`.\n\n";
    reproduce::write_markdown(out, table);
    if (!spec.notes.empty()) out << "\n";
    for (const auto& note : spec.notes) out << "- " << note << "\n";
  });
  std::cerr << "wrote " << md_file << std::endl;
  return report.states.count("failed") ? 1 : 0;
}

Register reg("reproduce", "Reproduce a table of the paper beside the published figures", run);

}  // namespace
}  // namespace comera::cli
