#include "search/sweep/published_figures.h"

#include "core/util/config_reader.h"
#include "core/util/error.h"

#include <cstdio>

namespace comera::sweep {

namespace {

bool is_range(const nlohmann::json& v) {
  return v.is_array() && v.size() == 2 && v[0].is_number() && v[1].is_number();
}

std::string short_number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", x);
  return text;
}

}  // namespace

nlohmann::json PublishedFigures::resolve(const nlohmann::json& value, const std::string& where) {
  if (value.is_number() || is_range(value)) return value;
  if (!value.is_string() || value.get<std::string>().rfind('/', 0) != 0)
    throw Error(where + ": expected a number, a [low, high] range or a JSON pointer such as "
                "\"/mnli_six_encoder/dense_model_mb\", got " + value.dump());
  if (file_.empty())
    throw Error(where + ": a JSON pointer needs the published-figures file (pass --reference FILE)");
  if (figures_.is_null()) figures_ = read_json_file(file_);
  const nlohmann::json::json_pointer pointer(value.get<std::string>());
  if (!figures_.contains(pointer))
    throw Error(where + ": " + value.get<std::string>() + " is not in " + file_);
  const nlohmann::json& found = figures_[pointer];
  if (found.is_number() || is_range(found) ||
      (found.is_object() && found.contains("value") && found["value"].is_number()))
    return found;
  throw Error(where + ": " + value.get<std::string>() + " in " + file_ + " is " + found.dump() +
              ", not a figure (a number, a range or {\"value\": ...})");
}

double PublishedFigures::number(const nlohmann::json& value, const std::string& where) {
  const nlohmann::json figure = resolve(value, where);
  if (figure.is_number()) return figure.get<double>();
  if (figure.is_object()) return figure["value"].get<double>();
  throw Error(where + ": " + figure.dump() + " is a range; a single number is needed here");
}

std::string figure_text(const nlohmann::json& figure) {
  if (figure.is_number()) return short_number(figure.get<double>());
  if (is_range(figure))
    return short_number(figure[0].get<double>()) + "-" + short_number(figure[1].get<double>());
  if (figure.is_object() && figure.contains("value"))
    return figure_text(figure["value"]) + (figure.value("uncertain", false) ? " (uncertain)" : "");
  return figure.is_string() ? figure.get<std::string>() : figure.dump();
}

}  // namespace comera::sweep
