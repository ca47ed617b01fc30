#pragma once
// Reads one JSON object of a config file. Every error names the key by its dotted path
// ("model.tensorized.attention.ranks") and says how to fix it; unknown keys are errors, so a
// misspelt setting never silently falls back to its default.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace comera {

class ConfigReader {
 public:
  ConfigReader(const nlohmann::json& value, std::string path);

  const std::string& path() const { return path_; }
  std::string key_path(const std::string& key) const;
  bool has(const std::string& key) const;

  int64_t integer(const std::string& key, int64_t fallback, int64_t min = 0,
                  int64_t max = std::numeric_limits<int64_t>::max()) const;
  double number(const std::string& key, double fallback, double min = 0,
                double max = std::numeric_limits<double>::infinity()) const;
  bool boolean(const std::string& key, bool fallback) const;
  std::string string(const std::string& key, const std::string& fallback) const;
  // One of `allowed`; the error lists them.
  std::string choice(const std::string& key, const std::string& fallback,
                     const std::vector<std::string>& allowed) const;
  // A list of integers >= min (required).
  std::vector<int64_t> integers(const std::string& key, int64_t min = 1) const;
  // The raw value (required), marked as read.
  const nlohmann::json& value(const std::string& key) const;
  // A nested object (required).
  ConfigReader object(const std::string& key) const;
  // Throws for every key that no accessor read (a typo or an unsupported setting).
  void finish() const;

 private:
  const nlohmann::json* find(const std::string& key) const;
  [[noreturn]] void fail(const std::string& key, const std::string& problem,
                         const std::string& fix) const;

  nlohmann::json json_;
  std::string path_;
  mutable std::set<std::string> known_;  // every key an accessor asked for
};

nlohmann::json read_json_file(const std::string& file);

}  // namespace comera
