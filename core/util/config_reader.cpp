#include "core/util/config_reader.h"

#include "core/util/comma_list.h"
#include "core/util/error.h"
#include "core/util/format.h"

#include <algorithm>
#include <cmath>
#include <fstream>

namespace comera {

namespace {

// Edits (insertions, deletions, substitutions) from a to b.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// For a missing key: "; 'axess' here may be it, misspelt" when the object holds a key within two
// edits that nothing asked for.
std::string misspelt(const nlohmann::json& object, const std::set<std::string>& known, const std::string& key) {
  for (const auto& [other, unused] : object.items()) {
    (void)unused;
    if (!known.count(other) && edit_distance(other, key) <= 2)
      return "; '" + other + "' here may be it, misspelt";
  }
  return "";
}

}  // namespace

ConfigReader::ConfigReader(const nlohmann::json& value, std::string path)
    : json_(value), path_(std::move(path)) {
  if (!json_.is_object())
    throw Error(path_ + ": expected a JSON object {...}, got " + json_.dump() +
                " (wrap the settings in braces)");
}

std::string ConfigReader::key_path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

// A key asked about is one of this object's, present or not: an unknown-key error lists it.
bool ConfigReader::has(const std::string& key) const {
  known_.insert(key);
  return json_.contains(key);
}

const nlohmann::json* ConfigReader::find(const std::string& key) const {
  known_.insert(key);
  auto it = json_.find(key);
  return it == json_.end() ? nullptr : &*it;
}

void ConfigReader::fail(const std::string& key, const std::string& problem,
                        const std::string& fix) const {
  throw Error(key_path(key) + ": " + problem + " (" + fix + ")");
}

int64_t ConfigReader::integer(const std::string& key, int64_t fallback, int64_t min,
                              int64_t max) const {
  const auto* v = find(key);
  if (!v) return fallback;
  if (!v->is_number_integer())
    fail(key, "expected an integer, got " + v->dump(), "write a whole number, e.g. " +
                                                        std::to_string(fallback));
  const int64_t x = v->get<int64_t>();
  if (x < min || x > max)
    fail(key, std::to_string(x) + " is out of range",
         "use a value in [" + std::to_string(min) + ", " +
             (max == std::numeric_limits<int64_t>::max() ? std::string("...") : std::to_string(max)) +
             "]");
  return x;
}

double ConfigReader::number(const std::string& key, double fallback, double min, double max) const {
  const auto* v = find(key);
  if (!v) return fallback;
  if (!v->is_number())
    fail(key, "expected a number, got " + v->dump(), "write a number, e.g. " + number_text(fallback));
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < min || x > max)
    fail(key, v->dump() + " is out of range",
         "use a value in [" + number_text(min) + ", " +
             (std::isinf(max) ? std::string("...") : number_text(max)) + "]");
  return x;
}

bool ConfigReader::boolean(const std::string& key, bool fallback) const {
  const auto* v = find(key);
  if (!v) return fallback;
  if (!v->is_boolean()) fail(key, "expected true or false, got " + v->dump(), "write true or false");
  return v->get<bool>();
}

std::string ConfigReader::string(const std::string& key, const std::string& fallback) const {
  const auto* v = find(key);
  if (!v) return fallback;
  if (!v->is_string()) fail(key, "expected a string, got " + v->dump(), "quote the value");
  return v->get<std::string>();
}

std::string ConfigReader::choice(const std::string& key, const std::string& fallback,
                                 const std::vector<std::string>& allowed) const {
  const std::string s = string(key, fallback);
  for (const auto& a : allowed)
    if (a == s) return s;
  fail(key, "unknown value \"" + s + "\"", "use one of: " + join_names(allowed));
}

std::vector<int64_t> ConfigReader::integers(const std::string& key, int64_t min) const {
  const auto* v = find(key);
  if (!v) fail(key, "missing", "add it as a list of integers, e.g. [12, 8, 8]" + misspelt(json_, known_, key));
  if (!v->is_array() || v->empty())
    fail(key, "expected a non-empty list of integers, got " + v->dump(), "write e.g. [12, 8, 8]");
  std::vector<int64_t> out;
  for (const auto& e : *v) {
    if (!e.is_number_integer() || e.get<int64_t>() < min)
      fail(key, "entry " + e.dump() + " is not an integer >= " + std::to_string(min),
           "fix that entry");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

const nlohmann::json& ConfigReader::value(const std::string& key) const {
  const auto* v = find(key);
  if (!v) fail(key, "missing", "add it" + misspelt(json_, known_, key));
  return *v;
}

ConfigReader ConfigReader::object(const std::string& key) const {
  const auto* v = find(key);
  if (!v) fail(key, "missing", "add it as an object {...}" + misspelt(json_, known_, key));
  return ConfigReader(*v, key_path(key));
}

void ConfigReader::finish() const {
  for (const auto& [key, unused] : json_.items()) {
    (void)unused;
    if (known_.count(key)) continue;
    std::string known;
    for (const auto& k : known_) known += (known.empty() ? "" : ", ") + k;
    fail(key, "unknown key", "check the spelling" +
                                 (known.empty() ? std::string() : "; known keys here: " + known));
  }
}

nlohmann::json read_json_file(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw Error("cannot open " + file + " (check the path)");
  try {
    return nlohmann::json::parse(in, nullptr, true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(file + ": invalid JSON: " + e.what() + " (fix the syntax at that byte)");
  }
}

}  // namespace comera
