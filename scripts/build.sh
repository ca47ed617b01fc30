#!/usr/bin/env bash
# Configures and builds comera (Release, Ninja, ccache when present) into build/.
#   scripts/build.sh                 everything: the CLI and the test binary
#   scripts/build.sh comera          only the targets named (the quickstart builds just the CLI)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${COMERA_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build "$build_dir" -j"$(nproc)" "${targets[@]}"
