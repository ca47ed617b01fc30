#pragma once
// A trained checkpoint in a form Python users load with plain `torch.load`: one dictionary with
// the run's config, every parameter and buffer by module path, each tensorized layer's cores and
// (masked) rank vectors with its modes, and optionally the dense weights rebuilt from the cores,
// named as in the model's dense twin (`--dense` build), so the dense architecture loads them.
#include <cstdint>
#include <string>
#include <vector>

namespace comera {

struct ModelExport {
  std::vector<char> bytes;  // torch.save's zip format (torch::pickle_save)
  int64_t tensors = 0;      // in "state_dict"
  int64_t tensorized_layers = 0;
  int64_t parameters = 0;        // entries of the model as trained
  int64_t dense_parameters = 0;  // entries of "dense_state_dict" (0 without it)
};

// Reads the checkpoint (a comera training checkpoint; errors name the file) and builds the
// export. dense_weights: add "dense_state_dict".
ModelExport export_model(const std::string& checkpoint, bool dense_weights);

}  // namespace comera
