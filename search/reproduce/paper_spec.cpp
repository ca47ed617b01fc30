#include "search/reproduce/paper_spec.h"

#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "core/util/home_dir.h"
#include "search/sweep/sweep_spec.h"

#include <algorithm>
#include <filesystem>

namespace comera::reproduce {

namespace {

namespace fs = std::filesystem;

fs::path paper_dir() { return fs::path(comera::home_dir()) / "experiments" / "paper"; }

// The published figures live beside the tables (sweep::default_figures_file) but are not one.
const char* const kFiguresName = "published_figures";

std::vector<pareto::Condition> conditions(const ConfigReader& r) {
  std::vector<pareto::Condition> out;
  if (!r.has("where")) return out;
  const auto& where = r.value("where");
  if (!where.is_array()) throw Error(r.key_path("where") + ": expected a list such as [\"kind=late\"]");
  for (const auto& c : where) {
    if (!c.is_string()) throw Error(r.key_path("where") + ": entry " + c.dump() + " is not text");
    out.push_back(pareto::parse_condition(c.get<std::string>()));
  }
  return out;
}

TableColumn read_column(const ConfigReader& r) {
  TableColumn c;
  c.label = r.string("label", "");
  if (c.label.empty()) throw Error(r.path() + ": every column needs a \"label\"");
  c.metric = r.string("metric", "");
  if (r.has("ratio")) {
    const auto& ratio = r.value("ratio");
    if (!ratio.is_array() || ratio.size() != 2 || !ratio[0].is_string() || !ratio[1].is_string())
      throw Error(r.key_path("ratio") + ": expected [\"numerator column\", \"denominator column\"]");
    c.numerator = ratio[0], c.denominator = ratio[1];
  }
  if (c.metric.empty() == c.numerator.empty())
    throw Error(r.path() + ": give a column either \"metric\" or \"ratio\"");
  c.where = conditions(r);
  c.scale = r.number("scale", 1, 0);
  if (r.has("published")) {
    c.published = r.value("published");
    if (!c.published.is_object())
      throw Error(r.key_path("published") + ": expected {\"row label\" or \"*\": figure}");
  }
  r.finish();
  return c;
}

}  // namespace

PaperSpec load_paper_spec(const std::string& name_or_file) {
  const bool is_path = name_or_file.find('/') != std::string::npos ||
                       fs::path(name_or_file).extension() == ".json";
  const fs::path file = is_path ? fs::path(name_or_file) : paper_dir() / (name_or_file + ".json");
  if (!fs::exists(file)) {
    std::string known;
    for (const auto& n : list_paper_specs()) known += (known.empty() ? "" : ", ") + n;
    throw Error("no paper table '" + name_or_file + "' (" + file.string() + "); known: " +
                (known.empty() ? "none" : known));
  }
  try {
    const ConfigReader r(read_json_file(file.string()), "");
    PaperSpec spec;
    spec.file = file.string();
    spec.name = r.string("name", file.stem().string());
    spec.title = r.string("title", spec.name);
    spec.sweep = r.value("sweep");
    if (!spec.sweep.is_object()) throw Error("sweep: expected a sweep spec object");
    if (r.has("scaled")) {
      const auto s = r.object("scaled");
      spec.scaled_note = s.string("note", "");
      if (spec.scaled_note.empty())
        throw Error("scaled.note: say what the default run scales down");
      spec.scaled_set = s.has("set") ? s.value("set") : nlohmann::json::object();
      if (!spec.scaled_set.is_object()) throw Error("scaled.set: expected {\"dotted.path\": value}");
      s.finish();
    }
    const auto table = r.object("table");
    const auto& rows = table.value("rows");
    const auto& columns = table.value("columns");
    if (!rows.is_array() || rows.empty() || !columns.is_array() || columns.empty())
      throw Error("table: needs non-empty \"rows\" and \"columns\" lists");
    for (size_t i = 0; i < rows.size(); ++i) {
      const ConfigReader row(rows[i], "table.rows[" + std::to_string(i) + "]");
      spec.rows.push_back({row.string("label", ""), conditions(row)});
      if (spec.rows.back().label.empty()) throw Error(row.path() + ": every row needs a \"label\"");
      row.finish();
    }
    for (size_t i = 0; i < columns.size(); ++i)
      spec.columns.push_back(read_column(ConfigReader(columns[i], "table.columns[" + std::to_string(i) + "]")));
    for (const auto& c : spec.columns)
      for (const auto& other : {c.numerator, c.denominator})
        if (!other.empty() && std::none_of(spec.columns.begin(), spec.columns.end(),
                                           [&](const TableColumn& x) { return x.label == other && !x.metric.empty(); }))
          throw Error("table column '" + c.label + "': ratio names '" + other +
                      "', which is not a metric column of this table");
    if (table.has("notes"))
      for (const auto& n : table.value("notes")) spec.notes.push_back(n.get<std::string>());
    table.finish();
    r.finish();
    return spec;
  } catch (const Error& e) {
    throw Error(file.string() + ": " + e.what());
  }
}

nlohmann::json sweep_json(const PaperSpec& spec, bool full) {
  nlohmann::json sweep = spec.sweep;
  sweep["name"] = spec.name;
  const nlohmann::json patches = full ? nlohmann::json::object() : spec.scaled_set;
  // A scaled run may swap the base file; then it is read in, and patches may reach into it.
  if (patches.contains("base")) sweep["base"] = patches["base"];
  if (sweep.contains("base") && sweep["base"].is_string())
    sweep["base"] = read_json_file((fs::path(spec.file).parent_path() / sweep["base"].get<std::string>()).string());
  for (const auto& [path, value] : patches.items())
    if (path != "base") sweep::set_path(sweep, path, value);
  return sweep;
}

std::vector<std::string> list_paper_specs() {
  std::vector<std::string> names;
  if (fs::is_directory(paper_dir()))
    for (const auto& entry : fs::directory_iterator(paper_dir()))
      if (entry.path().extension() == ".json" && entry.path().stem() != kFiguresName)
        names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace comera::reproduce
