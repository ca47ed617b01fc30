#pragma once
// The tuner's measured choices of contraction order, cached per layer key and environment.
#include "search/store/results_db.h"

#include <optional>
#include <string>
#include <vector>

namespace comera::store {

struct KernelKey {
  std::string layer_modes;   // "12,8,8|8,8,12"
  std::string ranks;         // "1,12,30,30,30,12,1" (format_ranks)
  int64_t token_bucket = 0;  // batch x sequence, rounded to the tuner's bucket
  std::string dtype;         // "float32", ...
  std::string device;        // "cpu", "cuda:0"
  int threads = 1;
  std::string torch_version;
};

struct KernelChoice {
  KernelKey key;
  std::string fingerprint;  // Environment::fingerprint() where it was measured
  std::string choice;       // the chosen order, as text or JSON
  double median_ms = 0;
  int64_t repeats = 0;
  std::string git_commit;
  std::string created_at;  // set by the database
};

// Inserts, or replaces the choice with the same key and fingerprint.
void put_kernel_choice(ResultsDb& db, const KernelChoice& choice);
// The choice for this key measured under this fingerprint; choices from elsewhere are ignored.
std::optional<KernelChoice> get_kernel_choice(ResultsDb& db, const KernelKey& key,
                                              const std::string& fingerprint);
std::vector<KernelChoice> list_kernel_choices(ResultsDb& db);

}  // namespace comera::store
