#include "search/sweep/shard.h"

#include "core/util/error.h"

namespace comera::sweep {

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  size_t used_i = 0, used_n = 0;
  Shard shard;
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    const long i = std::stol(text.substr(0, slash), &used_i);
    const long n = std::stol(text.substr(slash + 1), &used_n);
    if (used_i != slash || used_n != text.size() - slash - 1 || n < 1 || i < 1 || i > n)
      throw std::invalid_argument("range");
    shard = {static_cast<size_t>(i), static_cast<size_t>(n)};
  } catch (const std::logic_error&) {
    throw Error("--shard " + text + ": expected i/N with 1 <= i <= N (e.g. 1/2 and 2/2 for two "
                "processes)");
  }
  return shard;
}

std::vector<size_t> shard_positions(size_t total, const Shard& shard) {
  std::vector<size_t> positions;
  for (size_t p = shard.index - 1; p < total; p += shard.count) positions.push_back(p);
  return positions;
}

}  // namespace comera::sweep
