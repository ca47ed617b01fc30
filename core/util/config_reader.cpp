#include "core/util/config_reader.h"

#include "core/util/comma_list.h"
#include "core/util/error.h"
#include "core/util/format.h"

#include <cmath>
#include <fstream>

namespace comera {

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
    fail(key, "expected a number, got " + v->dump(), "write a number, e.g. " + std::to_string(fallback));
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
  if (!v) fail(key, "missing", "add it as a list of integers, e.g. [12, 8, 8]");
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
  if (!v) fail(key, "missing", "add it");
  return *v;
}

ConfigReader ConfigReader::object(const std::string& key) const {
  const auto* v = find(key);
  if (!v) fail(key, "missing", "add it as an object {...}");
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
