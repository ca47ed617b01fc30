#pragma once
// Embedding table in TTM form with learnable rank vectors (METHOD §1, lookup per §5).
#include "core/formats/ttm_shape.h"
#include "core/layers/tensorized.h"

#include <torch/arg.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

namespace comera {

struct TTMEmbeddingOptions {
  // ranks: d+1 entries with boundary 1s.
  TTMEmbeddingOptions(int64_t vocab, std::vector<int64_t> vocab_modes,
                      std::vector<int64_t> emb_modes, std::vector<int64_t> ranks)
      : vocab_(vocab), vocab_modes_(std::move(vocab_modes)), emb_modes_(std::move(emb_modes)),
        ranks_(std::move(ranks)) {}
  TORCH_ARG(int64_t, vocab);
  TORCH_ARG(std::vector<int64_t>, vocab_modes);
  TORCH_ARG(std::vector<int64_t>, emb_modes);
  TORCH_ARG(std::vector<int64_t>, ranks);
  TORCH_ARG(double, threshold) = 1e-2;
  // Look each distinct id of a batch up once and scatter the rows back (METHOD §5b), when at
  // least a quarter of the batch's ids are repeats.
  TORCH_ARG(bool, dedup) = true;
};

class TTMEmbeddingImpl : public torch::nn::Cloneable<TTMEmbeddingImpl>, public Tensorized {
 public:
  explicit TTMEmbeddingImpl(TTMEmbeddingOptions options);

  void reset() override;
  void reset_parameters() override;
  std::vector<double> core_init_scales() const override { return init_scales_; }
  // ids: int64 of any shape -> (..., D). Optimised path: the chain merged into two tables at
  // its cheapest bond, one small GEMM per row (+ dedup).
  at::Tensor forward(const at::Tensor& ids);
  // Reference path: per id, contract its d core slices one after another.
  at::Tensor forward_naive(const at::Tensor& ids);
  // The whole (vocab, D) table by the optimised path (no dedup: every id occurs once).
  at::Tensor table();
  void pretty_print(std::ostream& stream) const override;

  const TTMShape& shape() const { return shape_; }
  // The cores with the masked rank vectors folded in, for the lookups of ttm_lookup.h.
  std::vector<at::Tensor> scaled() const;

  std::string layer_kind() const override { return "ttm_embedding"; }
  const CoreChain& chain() const override { return shape_.chain(); }
  std::vector<at::Tensor> rank_vectors() const override { return rank_vectors_; }
  std::vector<at::Tensor> cores() const override { return cores_; }
  double threshold() const override { return options.threshold(); }
  int64_t dense_equivalent() const override { return shape_.vocab() * shape_.dim(); }
  TruncationResult truncate(bool fold = false) override;

  TTMEmbeddingOptions options;

 private:
  std::vector<double> init_scales_;  // set by reset_parameters()
  TTMShape shape_;
  std::vector<at::Tensor> cores_;         // core k: (r_{k-1}, v_k, e_k, r_k)
  std::vector<at::Tensor> rank_vectors_;  // d_k: (r_k), k = 1..d-1
};

TORCH_MODULE(TTMEmbedding);

}  // namespace comera
