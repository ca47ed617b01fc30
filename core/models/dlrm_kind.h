#pragma once
// The DLRM as a model kind ("dlrm"), trained for click-through prediction ("ctr": one click
// probability per example, binary cross-entropy) on click-log batches (criteo.h: "dense",
// "sparse", "labels").
#include "core/models/model_kind.h"

#include <memory>

namespace comera {

std::shared_ptr<const ModelKind> dlrm_kind();

}  // namespace comera
