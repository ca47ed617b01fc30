#include "core/data/token_masking.h"

#include "core/util/error.h"

#include <ATen/ATen.h>

namespace comera {

MaskedTokens mask_tokens(const at::Tensor& ids, const at::Tensor& attention_mask,
                         const MaskingOptions& options, const at::Generator& generator) {
  if (options.probability <= 0 || options.probability > 1)
    throw Error("the masking probability must be in (0, 1], got " +
                std::to_string(options.probability));
  if (options.vocab_size <= 0) throw Error("masking needs the vocabulary size");
  auto eligible = attention_mask != 0;
  for (int64_t id : options.never) eligible &= ids != id;
  const auto flat_eligible = eligible.reshape({-1});
  const auto candidates = flat_eligible.nonzero().reshape({-1});
  if (candidates.numel() == 0)
    throw Error("a batch has no token that masking may choose (every token is padding or special)");

  const auto draw = at::rand({candidates.numel()}, generator, at::TensorOptions(at::kDouble));
  auto positions = candidates.masked_select(draw < options.probability);
  if (positions.numel() == 0) {
    // A short batch may draw none; the lowest draw is then chosen, so the loss is defined.
    positions = candidates.index_select(0, draw.argmin().reshape({1}));
  }
  auto input_ids = ids.clone();
  auto flat = input_ids.view({-1});
  const auto targets = flat.index_select(0, positions);
  // One draw per chosen position decides its fate: [0, 0.8) mask, [0.8, 0.9) random, else keep.
  const auto fate = at::rand({positions.numel()}, generator, at::TensorOptions(at::kDouble));
  const auto random_ids =
      at::randint(options.vocab_size, {positions.numel()}, generator, ids.options());
  auto replacement = at::where(fate < 0.8, at::full_like(targets, options.mask_id),
                               at::where(fate < 0.9, random_ids, targets));
  flat.index_copy_(0, positions, replacement);
  return {input_ids, positions, targets};
}

}  // namespace comera
