#!/usr/bin/env bash
# Builds comera against python3's LibTorch 2.x and runs its tests, on a machine with PyTorch but
# no package registry (the GPU machine). Two steps:
#   bash scripts/libtorch2_check.sh fetch   # here, with apt: Debian packages into .devdeps/
#   bash scripts/libtorch2_check.sh run     # there: unpack, configure, build, ctest
# Logs go to $OUT (the device tool's folder) or /tmp/libtorch2. .devdeps/ is not committed.
set -uo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  fetch)
    mkdir -p .devdeps
    grep -qx '/.devdeps/' .git/info/exclude 2>/dev/null || echo '/.devdeps/' >> .git/info/exclude
    (cd .devdeps && apt-get download libsqlitecpp-dev nlohmann-json3-dev libcxxopts-dev catch2 \
       libsqlite3-dev libgloo-dev libssl-dev zlib1g-dev)
    ;;
  run)
    logs=${OUT:-/tmp/libtorch2}; mkdir -p "$logs"
    deps=/tmp/deps; mkdir -p $deps
    for f in .devdeps/*.deb; do dpkg -x "$f" $deps; done
    prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
    python3 -c 'import torch; print("torch", torch.__version__)'
    g++ --version | head -1
    start=$(date +%s)
    cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix;$deps/usr" \
      > "$logs/configure.log" 2>&1 || { tail -30 "$logs/configure.log"; exit 1; }
    ninja -C /tmp/b -k 0 -j"$(nproc)" > "$logs/build.log" 2>&1
    echo "build rc $? ($(( $(date +%s) - start )) s)"
    grep -E "error:|FAILED" "$logs/build.log" | head -40
    [ -x /tmp/b/comera_tests ] || exit 1
    timeout 400 ctest --test-dir /tmp/b -j"$(nproc)" --timeout 300 --output-on-failure \
      > "$logs/ctest.log" 2>&1
    echo "ctest rc $? ($(( $(date +%s) - start )) s)"
    grep -E "tests passed|Failed|SegFault|\(SEGFAULT\)" "$logs/ctest.log" | head -40
    ;;
  -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) echo "usage: $0 fetch|run (--help for what each does)" >&2; exit 2 ;;
esac
