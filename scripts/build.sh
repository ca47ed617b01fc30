#!/usr/bin/env bash
# Configures and builds comera (Release, Ninja, ccache when present) into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${COMERA_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
