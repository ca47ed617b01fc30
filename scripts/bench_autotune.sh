#!/usr/bin/env bash
# The auto-tuner's benchmark (docs/sweeps.md, "Adaptive sweeps"): on one task, its hand grid once,
# then its adaptive spec's space sampled at random, by GP-EHVI, by GP-EHVI with pruning of
# dominated trials at epoch ends, and (variants gp-ehvi-steps and gp-ehvi-early-steps, not run by
# default) with pruning also at checks inside epochs (about four an epoch; the second not in the
# late stage), or (variant gp-ehvi-start) with pruning at epoch ends and the space's largest model
# left uncut given as its first point (sampling.start), under sampler seeds 0, 1 and 2, each sweep
# in a database of its own under DIR (default results/autotune-TASK); then `comera bench fronts` prints the hypervolume each reached
# against the trial-epochs and training minutes it spent, and draws it. Re-running resumes.
#
#   scripts/bench_autotune.sh [quickstart|dlrm] [DIR] [SEEDS] [VARIANTS]    e.g. scripts/bench_autotune.sh dlrm
#
# VARIANTS (default "grid random gp-ehvi gp-ehvi-pruning") runs a part, e.g. to re-measure one sampler.
#
# quickstart: experiments/sweeps/quickstart_grid.json against quickstart_adaptive.json (WordNet data:
# comera data build-wordnet). dlrm: dlrm_grid.json against dlrm_adaptive.json (SYNTHETIC click
# logs: comera data synth-criteo --out data/criteo_synth_small --scale 0.01 --train-lines 200000
# --eval-lines 20000). The hypervolume's axes: log10 size (parameters) and the task's metric,
# from a fixed reference point just past the dense model.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
comera=${COMERA:-$root/build/comera}
task=${1:-quickstart}
case "$task" in
  quickstart) grid=quickstart_grid.json; adaptive=quickstart_adaptive.json; metric=accuracy
              margin='"accuracy": 0.01'; ref=2.3e6,0; every=100      # 500 steps an epoch
              start='{"set.model.tensorized.embedding.ranks": 128, "targets.loss": 1.8, "targets.size_ratio": 1}' ;;
  dlrm) grid=dlrm_grid.json; adaptive=dlrm_adaptive.json; metric=auc; margin='"auc": 0.002'; ref=6.5e6,0.5
        every=200                                                       # 782 steps an epoch
        start='{"set.model.tensorized.tables.ranks": 32, "gamma": 0.0001}' ;;
  *) echo "bench_autotune: unknown task '$task' (quickstart or dlrm)" >&2; exit 2 ;;
esac
dir=${2:-$root/results/autotune-$task}
seeds=${3:-0 1 2}
variants=${4:-grid random gp-ehvi gp-ehvi-pruning}
mkdir -p "$dir/specs"
sweeps=$root/experiments/sweeps

case " $variants " in *" grid "*) "$comera" sweep "$sweeps/$grid" --db "$dir/grid.db" --quiet --no-front ;; esac
for seed in $seeds; do
  for variant in $variants; do
    [ "$variant" = grid ] && continue
    sampler=$variant pruning="" first=""
    case "$variant" in
      gp-ehvi-pruning) sampler=gp-ehvi; pruning="\"pruning\": {\"margin\": {$margin}},"  ;;
      gp-ehvi-steps) sampler=gp-ehvi; pruning="\"pruning\": {\"margin\": {$margin}, \"every_steps\": $every}," ;;
      gp-ehvi-early-steps) sampler=gp-ehvi
        pruning="\"pruning\": {\"margin\": {$margin}, \"every_steps\": $every, \"late_checks\": false}," ;;
      gp-ehvi-start) sampler=gp-ehvi; pruning="\"pruning\": {\"margin\": {$margin}},"; first=", \"start\": [$start]" ;;
    esac
    spec="$dir/specs/$variant-$seed.json"
    # The spec's "base" is relative to its folder: made absolute for the copy.
    sed -e "s|\"sampler\": \"gp-ehvi\"|\"sampler\": \"$sampler\"|" -e "s|\"seed\": 0}|\"seed\": $seed$first}|" \
        -e "s|\"base\": \"\\([^\"]*\\)\",|\"base\": \"$sweeps/\\1\", $pruning|" "$sweeps/$adaptive" > "$spec"
    echo "== $task: $variant, sampler seed $seed"
    "$comera" sweep "$spec" --db "$dir/$variant-$seed.db" --quiet --no-front
  done
done
"$comera" bench fronts "$dir"/*.db --objectives "size:min,$metric:max" --log size --ref "$ref" \
  --plot "$dir/hypervolume.png"
