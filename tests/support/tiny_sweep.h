#pragma once
// A sweep spec over a tiny model (one layer, d_model 8, attention and embedding tensorized at
// rank 2) on the MNLI fixture pairs: each trial takes well under a second.
#include "core/util/source_dir.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace comera::testing {

// A sweep of a tiny model on the fixture pairs: dense and early baselines and `targets` late
// trials, each `epochs` epochs of two steps.
inline nlohmann::json tiny_sweep(int epochs, std::vector<double> ratios = {0.5}) {
  nlohmann::json experiment = {
      {"name", "tiny"},
      {"model",
       {{"vocab", 30522}, {"d_model", 8}, {"heads", 2}, {"layers", 1}, {"ffn", 16},
        {"max_positions", 16}, {"classes", 3}, {"dropout", 0.0},
        {"tensorized",
         {{"embedding", {{"vocab_modes", {32, 32, 30}}, {"emb_modes", {2, 2, 2}}, {"ranks", 2}}},
          {"attention", {{"in_modes", {4, 2}}, {"out_modes", {2, 4}}, {"ranks", 2}}}}}}},
      {"training",
       {{"epochs", epochs}, {"batch_size", 2}, {"eval_batch_size", 8}, {"seed", 1},
        {"late_stage", {{"start_epoch", epochs / 2}, {"loss_target", 0.5}, {"size_ratio", 0.5}}}}},
      {"data",
       {{"dir", comera::source_dir() + "/tests/fixtures/mnli"},
        {"train", "train.tsv"}, {"eval", "dev_matched.tsv"}, {"max_length", 16}}}};
  return {{"name", "tiny"},
          {"base", experiment},
          {"axes", {{"targets", {{"loss", {0.5}}, {"size_ratio", ratios}}}}},
          {"baselines", {"dense", "early"}}};
}

}  // namespace comera::testing
