#!/usr/bin/env bash
# The main job: set up, build, build the default task (code/docstring pairs), then a small sweep
# on it: a dense and an early-stage baseline and five (L0, S0) targets of the late stage, about
# 8 minutes on a fresh 2-core machine, most of it setup and the build. Prints the Pareto front (eval loss vs size) and writes
# results/quickstart.db and results/quickstart_pareto.png. Re-running it resumes the sweep:
# complete trials are kept, an interrupted one is run again.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
[ -s data/pairs/pystdlib/train.jsonl ] && [ -s data/pairs/pystdlib/dev.jsonl ] ||
  ./build/comera data build-pairs
./build/comera sweep experiments/sweeps/quickstart.json --db results/quickstart.db \
  --plot results/quickstart_pareto.png
