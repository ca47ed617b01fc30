#!/usr/bin/env bash
# The auto-tuner's benchmark on the quickstart task (docs/sweeps.md, "Adaptive sweeps"): the hand
# grid (experiments/sweeps/quickstart.json) once, then the adaptive spec's space
# (quickstart_adaptive.json) sampled at random, by GP-EHVI, and by GP-EHVI with pruning, under
# sampler seeds 0, 1 and 2, each sweep in a database of its own under DIR (default
# results/autotune); then `comera bench fronts` prints the hypervolume each reached against the
# trial-epochs and training minutes it spent, and draws it. Re-running resumes every sweep.
#
#   scripts/bench_autotune.sh [DIR] [SEEDS]      e.g. scripts/bench_autotune.sh results/autotune "0 1 2"
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
comera=${COMERA:-$root/build/comera}
dir=${1:-$root/results/autotune}
seeds=${2:-0 1 2}
mkdir -p "$dir/specs"
spec=$root/experiments/sweeps/quickstart_adaptive.json

"$comera" sweep "$root/experiments/sweeps/quickstart.json" --db "$dir/grid.db" --quiet --no-front
for seed in $seeds; do
  for variant in random gp-ehvi gp-ehvi-pruning; do
    sampler=${variant%-pruning}
    pruning=""
    [ "$variant" = gp-ehvi-pruning ] && pruning='"pruning": {"margin": {"accuracy": 0.01}},'
    variant_spec="$dir/specs/$variant-$seed.json"
    # The spec's "base" is relative to its folder: point it at the experiments folder.
    sed -e "s|\"sampler\": \"gp-ehvi\"|\"sampler\": \"$sampler\"|" -e "s|\"seed\": 0}|\"seed\": $seed}|" \
        -e "s|\"base\": \"quickstart_base.json\",|\"base\": \"$root/experiments/sweeps/quickstart_base.json\", $pruning|" \
        "$spec" > "$variant_spec"
    echo "== $variant, sampler seed $seed"
    "$comera" sweep "$variant_spec" --db "$dir/$variant-$seed.db" --quiet --no-front
  done
done
"$comera" bench fronts "$dir"/*.db --objectives size:min,accuracy:max --log size --ref 2.3e6,0 \
  --plot "$dir/hypervolume.png"
