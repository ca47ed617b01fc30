#include "search/tuner/layer_tokens.h"

namespace comera::tuner {

std::function<int64_t(const std::string&)> layer_tokens(const ExperimentConfig& e) {
  const int64_t batch = e.training.batch_size, tokens = batch * e.data.max_length;
  return [batch, tokens](const std::string& path) {
    return path.rfind("classification.", 0) == 0 ? batch : tokens;
  };
}

}  // namespace comera::tuner
