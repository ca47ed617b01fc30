#pragma once
// Published figures named in specs: a number, a [low, high] range, or a JSON pointer such as
// "/mnli_six_encoder/dense_model_mb" into the published-figures file (paper_reference.json),
// which is read on first use.
#include <nlohmann/json.hpp>

#include <string>

namespace comera::sweep {

class PublishedFigures {
 public:
  explicit PublishedFigures(std::string file) : file_(std::move(file)) {}

  // The figure as published: a number, a range, or the file's {"value", "uncertain"} object.
  // `where` names the spec key in errors.
  nlohmann::json resolve(const nlohmann::json& value, const std::string& where);
  // The same as one number (a range or another shape throws, naming `where`).
  double number(const nlohmann::json& value, const std::string& where);

 private:
  std::string file_;
  nlohmann::json figures_;
};

// "3.2", "2-3", "43 (uncertain)": a resolved figure as table text.
std::string figure_text(const nlohmann::json& figure);

}  // namespace comera::sweep
