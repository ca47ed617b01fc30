#pragma once
// The scale gauge of the rank vectors (docs/method.md, "The late stage"). A slice of a bond can
// be scaled up in the cores beside it and down in its rank-vector entry without changing the
// layer, so a size term on the rank vectors can be lowered by growing the cores instead of
// cutting anything. The late stage holds each core's root-mean-square entry where it was when
// the stage began, evenly over its slices, and moves every change of scale into the rank
// vectors, so |d| measures each slice's weight.
#include <map>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}

namespace comera {

// By tensorized layer: each core's root-mean-square entry. A slice of core k along a bond of
// allocated rank r is held at that times sqrt(entries of the core / r), so that the core keeps
// it from either side, whatever truncation cuts.
using GaugeNorms = std::map<std::string, std::vector<double>>;

GaugeNorms measure_gauge(const torch::nn::Module& model);

// Rescales each surviving slice along each bond to its held norm and multiplies the factors
// into the bond's rank vector: every layer's output is unchanged. One sweep over the bonds; a
// core between two bonds settles over repeated calls (one per step). Pruned entries and their slices are
// left alone (a factor must not revive them). Layers missing from `norms` are skipped.
void hold_gauge(const torch::nn::Module& model, const GaugeNorms& norms);

}  // namespace comera
