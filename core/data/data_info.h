#pragma once
// What a model needs to know of the data it is built for, so that a mismatch is an error
// before training: the vocabulary (its size and the ids masking may use or must spare), the
// tokens per example, the label and segment ranges; for click logs, the feature layout.
#include <cstdint>
#include <vector>

namespace comera {

struct DataInfo {
  int64_t vocab_size = 0;            // 0: no data was read (tuning, benchmarks)
  int64_t mask_id = -1;              // [MASK], or -1 when the vocabulary has none
  std::vector<int64_t> special_ids;  // never masked ([PAD], [CLS], [SEP])
  int64_t max_length = 0;            // tokens per example at most; 0: unknown
  int64_t classes = 0;               // the largest label + 1; 0: no labels read
  int64_t segments = 0;              // segment ids 0..segments-1 (pairs: 2, texts: 1); 0: unknown
  // Click logs: dense features per example, and the rows each categorical id is hashed into.
  int64_t dense_features = 0;
  std::vector<int64_t> table_sizes;
};

}  // namespace comera
