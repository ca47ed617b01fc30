#include "core/data/token_masking.h"

#include "core/util/error.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace comera {

namespace {

// n uniformly random ids of [0, vocab) outside `never`: a draw over the allowed ids, mapped
// past the excluded ones below it.
at::Tensor random_ids(int64_t n, int64_t vocab, std::vector<int64_t> never,
                      const at::Generator& generator, const at::TensorOptions& options) {
  std::sort(never.begin(), never.end());
  never.erase(std::unique(never.begin(), never.end()), never.end());
  never.erase(std::remove_if(never.begin(), never.end(), [&](int64_t id) { return id < 0 || id >= vocab; }),
              never.end());
  const int64_t allowed = vocab - static_cast<int64_t>(never.size());
  if (allowed <= 0) throw Error("masking: every id of the vocabulary is special; none can replace a token");
  auto ids = at::randint(allowed, {n}, generator, options);
  // Ascending, each excluded id moves the draws at or past it up by one.
  for (const int64_t excluded : never) ids += (ids >= excluded).to(ids.scalar_type());
  return ids;
}

}  // namespace

MaskedTokens mask_tokens(const at::Tensor& ids, const at::Tensor& attention_mask,
                         const MaskingOptions& options, const at::Generator& generator) {
  if (options.probability <= 0 || options.probability > 1)
    throw Error("the masking probability must be in (0, 1], got " +
                std::to_string(options.probability));
  if (options.vocab_size <= 0) throw Error("masking needs the vocabulary size");
  if (ids.dim() != 2) throw Error("masking expects (batch, length) token ids");
  auto eligible = attention_mask != 0;
  for (int64_t id : options.never) eligible &= ids != id;
  const auto dbl = at::TensorOptions(at::kDouble);
  const int64_t rows = ids.size(0), length = ids.size(1);

  // Per row: floor(p * L + u) positions, those with the smallest random keys among the eligible.
  const auto counts = eligible.sum(1).to(at::kDouble);
  const auto chosen_per_row =
      (counts * options.probability + at::rand({rows}, generator, dbl)).floor_().to(at::kLong);
  auto keys = at::rand({rows, length}, generator, dbl).masked_fill_(eligible.logical_not(), 2.0);
  const auto order = std::get<1>(keys.sort(/*dim=*/1));
  auto rank = at::empty_like(order);
  rank.scatter_(1, order, at::arange(length, ids.options()).expand({rows, length}).contiguous());
  const auto chosen = (rank < chosen_per_row.unsqueeze(1)) & eligible;

  const auto flat_eligible = eligible.reshape({-1});
  auto positions = chosen.reshape({-1}).nonzero().reshape({-1});
  if (positions.numel() == 0) {
    // Short sequences may round to none; the eligible token with the lowest key is then chosen,
    // so the loss is defined.
    const auto candidates = flat_eligible.nonzero().reshape({-1});
    if (candidates.numel() == 0)
      throw Error("a batch has no token that masking may choose (every token is padding or special)");
    positions = candidates.index_select(0, keys.reshape({-1}).index_select(0, candidates).argmin().reshape({1}));
  }
  auto input_ids = ids.clone();
  auto flat = input_ids.view({-1});
  const auto targets = flat.index_select(0, positions);
  // One draw per chosen position decides its fate: [0, 0.8) mask, [0.8, 0.9) random, else keep.
  const auto fate = at::rand({positions.numel()}, generator, dbl);
  const auto random = random_ids(positions.numel(), options.vocab_size, options.never, generator, ids.options());
  auto replacement = at::where(fate < 0.8, at::full_like(targets, options.mask_id),
                               at::where(fate < 0.9, random, targets));
  flat.index_copy_(0, positions, replacement);
  return {input_ids, positions, targets};
}

}  // namespace comera
