#include "core/formats/tt_shape.h"

#include "core/util/error.h"

namespace comera {

namespace {

std::string modes_str(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  return "[" + join_dims(in) + "|" + join_dims(out) + "]";
}

std::vector<int64_t> validated_core_sizes(const std::vector<int64_t>& in,
                                          const std::vector<int64_t>& out) {
  const std::string what = "TTShape " + modes_str(in, out);
  if (in.empty() || out.empty())
    throw Error(what + ": needs at least one input and one output mode");
  if (in.size() != out.size())
    throw Error(what + ": " + std::to_string(in.size()) + " input modes but " +
                std::to_string(out.size()) +
                " output modes; give the same number d on both sides (pad with 1s if needed)");
  std::vector<int64_t> sizes(in);
  sizes.insert(sizes.end(), out.begin(), out.end());
  for (size_t k = 0; k < sizes.size(); ++k)
    if (sizes[k] < 1)
      throw Error(what + ": mode " + std::to_string(k) + " is " + std::to_string(sizes[k]) +
                  "; every mode must be >= 1");
  return sizes;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

}  // namespace

TTShape::TTShape(std::vector<int64_t> in_modes, std::vector<int64_t> out_modes,
                 std::vector<int64_t> ranks)
    : in_modes_(std::move(in_modes)), out_modes_(std::move(out_modes)) {
  chain_ = CoreChain(validated_core_sizes(in_modes_, out_modes_), std::move(ranks),
                     "TTShape " + modes_str(in_modes_, out_modes_));
}

TTShape TTShape::uniform(std::vector<int64_t> in_modes, std::vector<int64_t> out_modes,
                         int64_t rank) {
  auto ranks = capped_uniform_ranks(validated_core_sizes(in_modes, out_modes), rank);
  return TTShape(std::move(in_modes), std::move(out_modes), std::move(ranks));
}

TTShape TTShape::for_features(int64_t in, int64_t out, std::vector<int64_t> in_modes,
                              std::vector<int64_t> out_modes, std::vector<int64_t> ranks) {
  TTShape shape(std::move(in_modes), std::move(out_modes), std::move(ranks));
  if (shape.in_features() != in || shape.out_features() != out)
    throw Error("TTShape " + modes_str(shape.in_modes(), shape.out_modes()) +
                ": modes multiply to " + std::to_string(shape.in_features()) + " -> " +
                std::to_string(shape.out_features()) + " but the layer is " + std::to_string(in) +
                " -> " + std::to_string(out) +
                "; choose modes whose products match (see `comera shapes` for factorizations)");
  return shape;
}

int64_t TTShape::in_features() const { return product(in_modes_); }
int64_t TTShape::out_features() const { return product(out_modes_); }

std::string TTShape::str() const {
  return modes_str(in_modes_, out_modes_) + " r=" + join_dims(ranks());
}

}  // namespace comera
