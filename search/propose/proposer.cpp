#include "search/propose/proposer.h"

#include "core/util/comma_list.h"
#include "core/util/error.h"
#include "search/propose/gp_ehvi.h"
#include "search/propose/history.h"
#include "search/propose/motpe.h"

#include <algorithm>

namespace comera::propose {

namespace {

uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

int64_t default_initial(size_t axes, int64_t budget) {
  const auto d = static_cast<int64_t>(axes);
  const int64_t usual = std::max<int64_t>(5, 2 * d);
  return budget > 0 ? std::min(usual, std::max(d + 1, (budget + 1) / 2)) : usual;
}

std::vector<std::string> proposer_methods() { return {"random", "gp-ehvi", "motpe"}; }

Proposal propose(const Space& space, const std::vector<Observation>& done, const std::vector<Values>& pending,
                 const ProposerOptions& options) {
  check_space(space);
  const auto methods = proposer_methods();
  if (std::find(methods.begin(), methods.end(), options.method) == methods.end())
    throw Error("proposer: unknown method '" + options.method + "' (use one of " + join_names(methods) + ")");
  if (options.initial < 0)
    throw Error("proposer: initial design of " + std::to_string(options.initial) +
                " points (give 0 for the default, or a positive count)");
  if (options.budget < 0)
    throw Error("proposer: budget of " + std::to_string(options.budget) + " proposals (give 0 when not known)");
  if (options.candidates < 1)
    throw Error("proposer: " + std::to_string(options.candidates) + " candidates (give at least 1)");
  for (size_t i = 0; i < done.size(); ++i) check_values(space, done[i].x, "observation " + std::to_string(i));
  for (size_t i = 0; i < pending.size(); ++i) check_values(space, pending[i], "pending point " + std::to_string(i));
  const History history = read_history(done);

  // Each proposal draws its own stream: the same seed, moved on by the points asked for so far.
  const uint64_t asked = done.size() + pending.size();
  const uint64_t seed = splitmix64(options.seed ^ splitmix64(asked));
  Proposal out;
  if (options.method == "random") {
    Rng rng(seed);
    out.x = random_values(space, rng);
    out.method = "random";
    out.reason = "random draw " + std::to_string(asked + 1);
    return out;
  }
  const auto initial = static_cast<uint64_t>(
      options.initial > 0 ? options.initial : default_initial(space.size(), options.budget));
  if (asked < initial) {
    // The whole design comes from the seed alone, so each row is drawn exactly once.
    out.x = latin_hypercube_row(space, static_cast<int64_t>(initial), static_cast<int64_t>(asked),
                                splitmix64(options.seed));
    out.method = "random";
    out.reason = "initial Latin hypercube design, " + std::to_string(asked + 1) + " of " + std::to_string(initial);
    return out;
  }
  if (history.finished.size() < 2) {
    Rng rng(seed);
    out.x = random_values(space, rng);
    out.method = "random";
    out.reason = "random: " + std::to_string(history.finished.size()) +
                 " finished trials, and the model needs 2";
    return out;
  }
  return options.method == "gp-ehvi" ? propose_gp_ehvi(space, done, history, pending, options, seed)
                                     : propose_motpe(space, done, history, pending, seed);
}

}  // namespace comera::propose
