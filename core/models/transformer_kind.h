#pragma once
// The BERT-style transformer as a model kind ("transformer"): trained for sentence-pair
// classification through its classification head or for masked-LM through its tied decoder.
#include "core/models/model_kind.h"

#include <memory>

namespace comera {

std::shared_ptr<const ModelKind> transformer_kind();

}  // namespace comera
