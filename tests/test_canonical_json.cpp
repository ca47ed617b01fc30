// Canonical config JSON and its SHA-256 hash, against hand-written canonical text and digests
// computed with coreutils' sha256sum.
#include "core/util/error.h"
#include "search/store/canonical_json.h"
#include "search/store/sha256.h"
#include "tests/support/catch.h"

#include <cmath>
#include <limits>

using namespace comera;
using namespace comera::store;
using Catch::Matchers::Contains;
using nlohmann::json;

TEST_CASE("sha256_hex matches the FIPS 180-2 and sha256sum digests", "[canonical]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // printf '{"a":1}' | sha256sum
  CHECK(config_hash(json{{"a", 1}}) ==
        "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862");
}

TEST_CASE("canonical JSON sorts keys and normalises numbers", "[canonical]") {
  const auto a = json::parse(R"({"b": 1.0, "a": {"y": 2.0, "x": [1, 2.5]}})");
  const auto b = json::parse(R"({"a": {"x": [1.0, 2.5], "y": 2}, "b": 1})");
  CHECK(canonical_json(a) == R"({"a":{"x":[1,2.5],"y":2},"b":1})");
  CHECK(canonical_json(b) == canonical_json(a));
  // printf '{"a":{"x":[1,2.5],"y":2},"b":1}' | sha256sum
  CHECK(config_hash(a) == "1e79836693621b70eec76016958708af902e9d5ac804888e0ea54eb9ba4e2192");
  CHECK(config_hash(b) == config_hash(a));

  CHECK(canonical_json(json::parse("[1e0, 1.0, -0.0, 0, 0.1, 1e-05, 1e300]")) ==
        "[1,1,0,0,0.1,1e-05,1e+300]");
  CHECK(canonical_json(json::parse("{\"lr\": 0.001}")) ==
        canonical_json(json::parse("{\"lr\": 1e-3}")));
  // Integral floats become integers only where doubles are exact (|x| <= 2^53).
  CHECK(canonical_json(json(9007199254740992.0)) == "9007199254740992");
  CHECK(canonical_json(json(18014398509481984.0)) == "1.8014398509481984e+16");
  // 64-bit seeds keep every digit.
  CHECK(canonical_json(json::parse("{\"seed\": 18446744073709551615}")) ==
        "{\"seed\":18446744073709551615}");
  CHECK(canonical_json(json::parse("{\"seed\": 9223372036854775807}")) ==
        "{\"seed\":9223372036854775807}");
}

TEST_CASE("canonical JSON keeps nested structure and distinguishes different values",
          "[canonical]") {
  const json base = json::parse(R"({"model": {"ranks": [1, 12, 30], "opt": {"lr": 0.001}}})");
  CHECK(config_hash(base) ==
        config_hash(json::parse(R"({"model": {"opt": {"lr": 1e-3}, "ranks": [1.0, 12, 30]}})")));
  for (const char* other : {R"({"model": {"ranks": [1, 12, 31], "opt": {"lr": 0.001}}})",
                            R"({"model": {"ranks": [12, 1, 30], "opt": {"lr": 0.001}}})",
                            R"({"model": {"ranks": [1, 12, 30], "opt": {"lr": 0.002}}})",
                            R"({"model": {"ranks": [1, 12, 30], "opt": {"lr": "0.001"}}})",
                            R"({"model": {"ranks": [1, 12, 30], "opt": {"LR": 0.001}}})",
                            R"({"model": {"ranks": [1, 12, 30]}, "opt": {"lr": 0.001}})"})
    CHECK(config_hash(json::parse(other)) != config_hash(base));
  CHECK(config_hash(json(true)) != config_hash(json(1)));
  CHECK(config_hash(json(nullptr)) != config_hash(json(0)));
}

TEST_CASE("canonical JSON refuses non-finite numbers, naming the key", "[canonical]") {
  json config = {{"opt", {{"lr", std::numeric_limits<double>::quiet_NaN()}}}};
  CHECK_THROWS_AS(canonical_json(config), Error);
  CHECK_THROWS_WITH(canonical_json(config), Contains("$.opt.lr"));
  config["opt"]["lr"] = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(config_hash(config), Contains("finite"));
  CHECK_THROWS_WITH(canonical_json(json{{"x", {1.0, -std::numeric_limits<double>::infinity()}}}),
                    Contains("$.x[1]"));
}
