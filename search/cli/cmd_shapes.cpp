// `comera shapes`: balanced TT mode factorizations for an in -> out layer.
#include "core/formats/factorize.h"
#include "core/formats/tt_shape.h"
#include "core/util/error.h"
#include "search/cli/command.h"

#include <nlohmann/json.hpp>

#include <iostream>

namespace comera::cli {
namespace {

int run(int argc, char** argv) {
  auto options = make_options("shapes", "Propose balanced TT mode factorizations for a layer");
  options.add_options()("in", "Input features", cxxopts::value<int64_t>())(
      "out", "Output features", cxxopts::value<int64_t>())(
      "modes", "Modes per side (d)", cxxopts::value<int64_t>()->default_value("3"))(
      "rank", "Uniform rank for the size column", cxxopts::value<int64_t>()->default_value("30"))(
      "count", "How many proposals", cxxopts::value<int64_t>()->default_value("5"))(
      "json", "Machine-readable output");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  if (!r.count("in") || !r.count("out"))
    throw Error("give --in and --out (e.g. comera shapes --in 768 --out 3072)");
  const int64_t in = r["in"].as<int64_t>(), out = r["out"].as<int64_t>();
  for (const char* flag : {"in", "out", "modes", "rank", "count"})
    if (r[flag].as<int64_t>() < 1)
      throw Error("--" + std::string(flag) + " " + std::to_string(r[flag].as<int64_t>()) + ": give 1 or more");
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [a, b] : propose_tt_modes(in, out, static_cast<int>(r["modes"].as<int64_t>()),
                                                    static_cast<int>(r["count"].as<int64_t>()))) {
    auto shape = TTShape::uniform(a, b, r["rank"].as<int64_t>());
    rows.push_back({{"in_modes", a}, {"out_modes", b}, {"ranks", shape.ranks()},
                    {"params", shape.params()}, {"dense_params", in * out}});
  }
  if (r.count("json")) {
    std::cout << rows.dump(2) << std::endl;
    return 0;
  }
  for (const auto& row : rows) {
    auto shape = TTShape(row["in_modes"], row["out_modes"], row["ranks"]);
    std::cout << shape.str() << "  params " << row["params"] << " (dense " << row["dense_params"]
              << ")\n";
  }
  return 0;
}

Register reg("shapes", "Balanced TT factorizations of an in -> out layer", run);

}  // namespace
}  // namespace comera::cli
