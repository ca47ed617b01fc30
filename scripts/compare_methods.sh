#!/usr/bin/env bash
# Every training method (dense AdamW, CoMERA's tensorized model, GaLore, LTE, plain low-rank) on
# the default WordNet task with the same steps (experiments/sweeps/wordnet_methods.json): prints
# each trial's accuracy, size and time per step side by side. Trials go to
# results/wordnet_methods.db; re-running it resumes.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/comera ] || bash scripts/build.sh
[ -s data/wordnet/train.jsonl ] && [ -s data/wordnet/dev.jsonl ] || ./build/comera data build-wordnet
./build/comera sweep experiments/sweeps/wordnet_methods.json --db results/wordnet_methods.db --no-front
echo
echo "== accuracy against size, every method (* = on the Pareto front)"
./build/comera pareto --db results/wordnet_methods.db --study wordnet_methods --all \
  --objectives size:min,accuracy:max
