#pragma once
// Embedding bag in TTM form: the drop-in for torch::nn::EmbeddingBag (sum or mean of each bag's
// rows) whose table is a TTMEmbedding (rank vectors, truncation and size accounting are that
// module's). The rows come from the lookup core of ttm_lookup.h, distinct ids looked up once,
// and are pooled straight from the distinct rows.
#include "core/layers/ttm_embedding.h"

#include <torch/arg.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace comera {

enum class BagMode { Sum, Mean };
BagMode parse_bag_mode(const std::string& name);  // "sum" | "mean"
const char* bag_mode_name(BagMode mode);

struct TTMEmbeddingBagOptions {
  TTMEmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  TORCH_ARG(int64_t, num_embeddings);
  TORCH_ARG(int64_t, embedding_dim);
  // Empty: factorised automatically into `cores` modes (core/formats/factorize.h,
  // propose_ttm_modes), rows padded up to the modes' product.
  TORCH_ARG(std::vector<int64_t>, vocab_modes) = {};
  TORCH_ARG(std::vector<int64_t>, emb_modes) = {};
  TORCH_ARG(int64_t, cores) = 3;
  // Full list with boundary 1s; empty: `rank` on every interior bond (capped at its bound).
  TORCH_ARG(std::vector<int64_t>, ranks) = {};
  TORCH_ARG(int64_t, rank) = 16;
  TORCH_ARG(BagMode, mode) = BagMode::Sum;
  TORCH_ARG(double, threshold) = 1e-2;
  TORCH_ARG(bool, dedup) = true;
  // offsets has B+1 entries, the last the number of indices (torch's include_last_offset).
  TORCH_ARG(bool, include_last_offset) = false;
};

class TTMEmbeddingBagImpl : public torch::nn::Cloneable<TTMEmbeddingBagImpl> {
 public:
  explicit TTMEmbeddingBagImpl(TTMEmbeddingBagOptions options);

  void reset() override;
  // As torch::nn::EmbeddingBag: indices 1-D with offsets (bag b is indices[offsets[b] ..
  // offsets[b+1])), or 2-D (B, L) with offsets undefined (one bag per row). Returns (B, dim); an
  // empty bag gives zeros. per_sample_weights (same shape as indices) scales each row; sum only.
  // Optimised path: merged tables, distinct ids once.
  at::Tensor forward(const at::Tensor& indices, const at::Tensor& offsets = {},
                     const at::Tensor& per_sample_weights = {});
  // Reference path: every index's row by contracting its d core slices, then the same pooling.
  at::Tensor forward_naive(const at::Tensor& indices, const at::Tensor& offsets = {},
                           const at::Tensor& per_sample_weights = {});
  void pretty_print(std::ostream& stream) const override;

  // The table (registered as "table"): its cores, rank vectors and shape.
  TTMEmbeddingImpl& table() { return *table_; }
  const TTMEmbeddingImpl& table() const { return *table_; }

  TTMEmbeddingBagOptions options;

 private:
  at::Tensor pooled(const at::Tensor& indices, const at::Tensor& offsets,
                    const at::Tensor& per_sample_weights, bool naive);

  TTMEmbedding table_{nullptr};
};

TORCH_MODULE(TTMEmbeddingBag);

}  // namespace comera
