#pragma once
// The exact area under the ROC curve of a binary task's scores.
#include <ATen/core/Tensor.h>

namespace comera {

// The probability that a random positive scores above a random negative, a tie counting half
// (Mann-Whitney U with mid-ranks), by sorting: exact, no binning. scores and targets (0/1) of the
// same length, any device and dtype. NaN when either class is absent.
double exact_auc(const at::Tensor& scores, const at::Tensor& targets);

}  // namespace comera
