#pragma once
// SHA-256 (OpenSSL's libcrypto): the config hash that identifies a trial within a study.
#include <string>

namespace comera::store {

// Lower-case hex digest (64 characters) of the bytes of `data`.
std::string sha256_hex(const std::string& data);

}  // namespace comera::store
