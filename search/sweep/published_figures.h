#pragma once
// Published figures named in specs: a number, a [low, high] range, or a JSON pointer such as
// "/mnli_six_encoder/dense_model_mb" into the published-figures file
// (experiments/paper/published_figures.json), which is read and checked on first use.
#include <nlohmann/json.hpp>

#include <string>

namespace comera::sweep {

// The repository's published-figures file: experiments/paper/published_figures.json.
std::string default_figures_file();

// Reads a published-figures file and checks every figure in it: an object with "value" (a
// number or a [low, high] range), "source", "certainty" (a key of the file's "certainty"
// legend) and optionally "unit" and "note". Errors name the file and the figure's pointer.
nlohmann::json load_figures_file(const std::string& file);

class PublishedFigures {
 public:
  explicit PublishedFigures(std::string file) : file_(std::move(file)) {}

  // Reads the file now (it is read when first needed otherwise): errors before long work.
  void load();

  // The figure as published: a number or range given in the spec, or the file's figure object.
  // `where` names the spec key in errors.
  nlohmann::json resolve(const nlohmann::json& value, const std::string& where);
  // The same as one number (a range or another shape throws, naming `where`).
  double number(const nlohmann::json& value, const std::string& where);

 private:
  std::string file_;
  nlohmann::json figures_;
};

// "3.2", "2-3", "43 (uncertain)", "0.7 (derived)": a resolved figure as table text.
std::string figure_text(const nlohmann::json& figure);

}  // namespace comera::sweep
