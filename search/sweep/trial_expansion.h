#pragma once
// The trials of a sweep, in a fixed order that every process and machine computes alike (what
// sharding and resuming rely on).
#include "search/sweep/sweep_spec.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace comera::sweep {

// Each trial's config, as stored in the results database:
//   {"kind": "dense" | "early" | "late" | "galore" | "lte" | "lowrank", "point": {axis labels},
//    "seed": s, "experiment": {...}}
// plus "step": {"length", "warmup", "repeats"} when the sweep measures single steps. A trial
// whose experiment names a baseline "method" (core/training/method.h) is of that kind.
// A dense baseline has no tensorized layers and no late stage; an early-stage baseline has no
// late stage and stops where the late stage would start (training.late_stage.start_epoch).
// Order: dense baselines, early-stage baselines, then the points (grid order with the first axis
// outermost and the targets innermost, or the random draws), each list without repeats. Every
// experiment is validated; an invalid one throws comera::Error naming its point.
// An adaptive sweep expands to its baselines only (the base as it is, under its one seed); its
// points come one at a time from point_trial, and its space is validated now (each range at
// both ends, every listed value).
std::vector<nlohmann::json> expand_trials(const SweepSpec& spec);

// The trial of one point: a choice for each axis after the seeds (an adaptive proposal), under
// the spec's first seed; validated as expand_trials does.
nlohmann::json point_trial(const SweepSpec& spec, const std::vector<Choice>& choices);

// The choices of a point in the proposer's values (per axis after the seeds: a range's number,
// a list's index).
std::vector<Choice> point_choices(const SweepSpec& spec, const std::vector<double>& x);

// A range axis's value as a choice: rounded to 4 significant digits (whole for an integer range),
// labelled, and patched at the axis's path when it has one.
Choice range_choice(const Axis& axis, double x);

// Whether every setting the axis patches belongs to the late stage (its targets, its control;
// not its start): trials that differ only there share their early stage.
bool late_only(const Axis& axis);

}  // namespace comera::sweep
