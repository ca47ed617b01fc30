#!/usr/bin/env bash
# The main job: set up, build, then run the layer and TTM embedding benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
./build/comera bench layer
./build/comera bench ttm
