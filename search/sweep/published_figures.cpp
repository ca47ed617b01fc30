#include "search/sweep/published_figures.h"

#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "core/util/home_dir.h"

#include <cstdio>
#include <filesystem>

namespace comera::sweep {

namespace {

bool is_range(const nlohmann::json& v) {
  return v.is_array() && v.size() == 2 && v[0].is_number() && v[1].is_number();
}

bool is_figure(const nlohmann::json& v) { return v.is_object() && v.contains("value"); }

std::string short_number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", x);
  return text;
}

// Checks every figure under `node` (at JSON pointer `at`) against the certainty legend.
void check_figures(const nlohmann::json& node, const std::string& at, const nlohmann::json& legend) {
  if (!node.is_object()) return;
  if (!is_figure(node)) {
    for (const auto& [key, child] : node.items()) check_figures(child, at + "/" + key, legend);
    return;
  }
  auto fail = [&](const std::string& problem) {
    throw Error(at + ": " + problem + " (a figure is {\"value\", \"source\", \"certainty\"}, "
                "with \"unit\" and \"note\" optional)");
  };
  if (!node["value"].is_number() && !is_range(node["value"]))
    fail("\"value\" must be a number or a [low, high] range, got " + node["value"].dump());
  if (!node.contains("source") || !node["source"].is_string() || node["source"].get<std::string>().empty())
    fail("says nothing of its \"source\" (where in the paper it is)");
  if (!node.contains("certainty") || !node["certainty"].is_string() ||
      !legend.contains(node["certainty"].get<std::string>())) {
    std::string known;
    for (const auto& [key, meaning] : legend.items()) known += (known.empty() ? "" : ", ") + key;
    fail("\"certainty\" must be one of " + known + ", got " +
         (node.contains("certainty") ? node["certainty"].dump() : std::string("nothing")));
  }
  for (const auto& [key, child] : node.items())
    if (key != "value" && key != "source" && key != "certainty" && key != "unit" && key != "note")
      fail("unknown key \"" + key + "\"");
}

}  // namespace

std::string default_figures_file() {
  return (std::filesystem::path(comera::home_dir()) / "experiments" / "paper" /
          "published_figures.json").string();
}

nlohmann::json load_figures_file(const std::string& file) {
  nlohmann::json figures = read_json_file(file);
  try {
    if (!figures.is_object() || !figures.contains("certainty") || !figures["certainty"].is_object() ||
        figures["certainty"].empty())
      throw Error("needs a \"certainty\" object naming each level of certainty and its meaning");
    for (const auto& [key, child] : figures.items())
      if (key != "certainty") check_figures(child, "/" + key, figures["certainty"]);
  } catch (const Error& e) {
    throw Error(file + ": " + e.what());
  }
  return figures;
}

nlohmann::json PublishedFigures::resolve(const nlohmann::json& value, const std::string& where) {
  if (value.is_number() || is_range(value)) return value;
  if (!value.is_string() || value.get<std::string>().rfind('/', 0) != 0)
    throw Error(where + ": expected a number, a [low, high] range or a JSON pointer such as "
                "\"/mnli_six_encoder/dense_model_mb\", got " + value.dump());
  if (file_.empty())
    throw Error(where + ": a JSON pointer needs the published-figures file (pass --reference FILE)");
  load();
  const nlohmann::json::json_pointer pointer(value.get<std::string>());
  if (!figures_.contains(pointer))
    throw Error(where + ": " + value.get<std::string>() + " is not in " + file_);
  const nlohmann::json& found = figures_[pointer];
  if (is_figure(found)) return found;
  throw Error(where + ": " + value.get<std::string>() + " in " + file_ + " is " + found.dump() +
              ", not a figure ({\"value\", \"source\", \"certainty\"})");
}

void PublishedFigures::load() {
  if (figures_.is_null()) figures_ = load_figures_file(file_);
}

double PublishedFigures::number(const nlohmann::json& value, const std::string& where) {
  const nlohmann::json figure = resolve(value, where);
  const nlohmann::json& v = is_figure(figure) ? figure["value"] : figure;
  if (v.is_number()) return v.get<double>();
  throw Error(where + ": " + v.dump() + " is a range; a single number is needed here");
}

std::string figure_text(const nlohmann::json& figure) {
  if (figure.is_number()) return short_number(figure.get<double>());
  if (is_range(figure))
    return short_number(figure[0].get<double>()) + "-" + short_number(figure[1].get<double>());
  if (is_figure(figure)) {
    // Only the figures the paper does not print as such are marked.
    const std::string certainty = figure.value("certainty", "");
    const bool marked = certainty == "uncertain" || certainty == "derived";
    return figure_text(figure["value"]) + (marked ? " (" + certainty + ")" : "");
  }
  return figure.is_string() ? figure.get<std::string>() : figure.dump();
}

}  // namespace comera::sweep
