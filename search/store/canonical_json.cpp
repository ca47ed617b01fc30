#include "search/store/canonical_json.h"

#include "core/util/error.h"
#include "search/store/sha256.h"

#include <cmath>

namespace comera::store {

namespace {

// Beyond 2^53 not every integer is a double, so larger integral floats stay floats.
constexpr double kExactIntegerLimit = 9007199254740992.0;

nlohmann::json normalise(const nlohmann::json& value, const std::string& path) {
  if (value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, item] : value.items()) out[key] = normalise(item, path + "." + key);
    return out;
  }
  if (value.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < value.size(); ++i)
      out.push_back(normalise(value[i], path + "[" + std::to_string(i) + "]"));
    return out;
  }
  if (value.is_number_float()) {
    const double x = value.get<double>();
    if (!std::isfinite(x))
      throw Error("config value at " + path + " is " + std::to_string(x) +
                  ": JSON configs must hold finite numbers");
    if (std::trunc(x) == x && std::fabs(x) <= kExactIntegerLimit) return static_cast<int64_t>(x);
    return x;
  }
  if (value.is_number_unsigned() && value.get<uint64_t>() <= INT64_MAX) return value.get<int64_t>();
  return value;
}

}  // namespace

std::string canonical_json(const nlohmann::json& value) {
  // nlohmann::json keeps object keys in a std::map, so dump() already sorts them.
  return normalise(value, "$").dump();
}

std::string config_hash(const nlohmann::json& value) { return sha256_hex(canonical_json(value)); }

}  // namespace comera::store
