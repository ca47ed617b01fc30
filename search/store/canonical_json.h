#pragma once
// Canonical JSON for configs: equal configs give equal text, hence equal hashes.
#include <nlohmann/json.hpp>

#include <string>

namespace comera::store {

// Compact text with object keys sorted (byte order), integral floats within +-2^53 written as
// integers (1.0 -> 1, -0.0 -> 0), other floats in shortest round-trip form. Throws comera::Error
// on NaN or infinity (JSON cannot hold them), naming the key path.
std::string canonical_json(const nlohmann::json& value);

// SHA-256 hex of canonical_json(value).
std::string config_hash(const nlohmann::json& value);

}  // namespace comera::store
