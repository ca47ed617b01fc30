#pragma once
// Options shared by `comera tune` and `comera bench paths`: candidate search, measurement and
// decision settings, and the dtype.
#include "search/tuner/tuner.h"

#include <c10/core/ScalarType.h>
#include <cxxopts.hpp>

namespace comera::cli {

void add_tuner_flags(cxxopts::Options& options);
tuner::TunerOptions tuner_options(const cxxopts::ParseResult& result);
at::ScalarType dtype_option(const cxxopts::ParseResult& result);

}  // namespace comera::cli
