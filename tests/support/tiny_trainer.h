#pragma once
// A tiny tensorized pair classifier and its training settings, small enough for the trainer
// tests to run many times: shared by the CPU trainer tests and the CUDA tests.
#include "core/data/pair_dataset.h"
#include "core/data/task_data.h"
#include "core/models/model_config.h"
#include "core/models/model_kind.h"
#include "core/training/train_config.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <random>
#include <vector>

namespace comera::testing {

// Pairs whose label is the first token of `a` modulo 3 (learnable from [CLS] attention); the
// other tokens are drawn from the `tokens` ids starting at `first`.
inline PairDataset synthetic_pairs(int64_t n, uint64_t seed, int64_t first = 3, uint64_t tokens = 45) {
  std::mt19937_64 rng(seed);
  std::vector<EncodedTokens> pairs;
  for (int64_t i = 0; i < n; ++i) {
    EncodedTokens p;
    const int64_t la = 2 + static_cast<int64_t>(rng() % 4), lb = 1 + static_cast<int64_t>(rng() % 3);
    p.input_ids.push_back(1);  // [CLS]
    for (int64_t t = 0; t < la; ++t) p.input_ids.push_back(first + static_cast<int64_t>(rng() % tokens));
    p.input_ids.push_back(2);  // [SEP]
    p.segment_ids.assign(p.input_ids.size(), 0);
    for (int64_t t = 0; t < lb; ++t) p.input_ids.push_back(first + static_cast<int64_t>(rng() % tokens));
    p.input_ids.push_back(2);
    p.segment_ids.resize(p.input_ids.size(), 1);
    p.label = p.input_ids[1] % 3;
    pairs.push_back(std::move(p));
  }
  return PairDataset(std::move(pairs), 0);
}

inline ModelConfig tiny_config(double threshold = 0.01) {
  return parse_model_config(nlohmann::json{
      {"vocab", 50}, {"d_model", 8}, {"heads", 2}, {"layers", 1}, {"ffn", 16},
      {"max_positions", 16}, {"classes", 3}, {"dropout", 0.1}, {"rank_threshold", threshold},
      {"tensorized",
       {{"embedding", {{"vocab_modes", {4, 4, 4}}, {"emb_modes", {2, 2, 2}}, {"ranks", 3}}},
        {"attention", {{"in_modes", {4, 2}}, {"out_modes", {2, 4}}, {"ranks", 3}}},
        {"ffn_in", {{"in_modes", {4, 2}}, {"out_modes", {4, 4}}, {"ranks", 3}}},
        {"ffn_out", {{"in_modes", {4, 4}}, {"out_modes", {2, 4}}, {"ranks", 3}}}}}});
}

inline ModelSpec tiny_model(double threshold = 0.01) {
  return parse_model_spec(tiny_config(threshold).to_json());
}

inline TaskData pairs_data(const PairDataset& train, const PairDataset& eval) {
  return {std::make_shared<PairDataset>(train), std::make_shared<PairDataset>(eval), {}, "", ""};
}

// 3 epochs of 5 batches (24 examples, batch 5: the last batch is short); ranks pruned fast
// (threshold 0.9, rank lr 0.05), truncated at epoch ends, late stage from epoch 1.
inline TrainConfig tiny_training() {
  TrainConfig c;
  c.epochs = 3;
  c.batch_size = 5;
  c.eval_batch_size = 4;
  c.seed = 11;
  c.optimizer.lr_cores = 0.01;
  c.optimizer.lr_ranks = 0.05;
  c.optimizer.lr_other = 0.01;
  c.early.gamma = 1.0;
  c.late.enabled = true;
  c.late.start_epoch = 1;
  c.late.size_ratio = 0.5;
  c.schedule.kind = ScheduleKind::Linear;
  c.schedule.warmup_steps = 2;
  return c;
}

}  // namespace comera::testing
