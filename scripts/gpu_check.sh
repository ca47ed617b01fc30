#!/usr/bin/env bash
# Builds comera against python3's LibTorch 2.x (with CUDA when it has it), runs the whole test
# suite and the GPU benchmarks, on a machine with PyTorch but no package registry (the project's
# GPU machine). Two steps:
#   bash scripts/gpu_check.sh fetch          # here, with apt: Debian packages into .devdeps/
#   bash scripts/gpu_check.sh run [STEPS]    # there: unpack, configure, build, test, benchmark
# STEPS (comma-separated, default build,test,bench):
#   build  unpack the packages, configure against python3's LibTorch, build with every core
#   test   the CUDA tests first; after the benchmarks, the whole suite at 2 threads a test in
#          what is left of the round (COMERA_SECONDS, default 540), and a cuda-gdb backtrace of
#          the first test file that fails
#   bench  docs/gpu.md's tables: bench step for TT, dense and GaLore at batch 1-128, a profile
#          of the TT step, bench layer, bench ttm and tune (JSON, and a summary table)
# Logs and summary.md go to $OUT (the device tool's folder) or /tmp/gpu_check. The working tree
# needs .devdeps/, data/vocab/ and third_party/npm/ beside it (the device tool's carry).
set -uo pipefail
cd "$(dirname "$0")/.."
steps=${2:-build,test,bench}
has() { [[ ",$steps," == *",$1,"* ]]; }

case "${1:-}" in
  fetch)
    mkdir -p .devdeps
    grep -qx '/.devdeps/' .git/info/exclude 2>/dev/null || echo '/.devdeps/' >> .git/info/exclude
    (cd .devdeps && apt-get download libsqlitecpp-dev nlohmann-json3-dev libcxxopts-dev catch2 \
       libsqlite3-dev libgloo-dev libssl-dev zlib1g-dev libzip-dev libzip4)
    ;;
  run)
    out=${OUT:-/tmp/gpu_check}; mkdir -p "$out"
    build=${COMERA_BUILD_DIR:-/tmp/comera-gpu}
    summary=$out/summary.md
    start=$(date +%s)
    elapsed() { echo "$(( $(date +%s) - start )) s"; }
    {
      echo "# gpu_check $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
      nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | sed 's/^/- GPU: /'
      python3 -c 'import torch; print("- PyTorch", torch.__version__, "CUDA", torch.version.cuda)'
      echo "- $(g++ --version | head -1); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
    } > "$summary"
    if has build; then
      deps=/tmp/deps; mkdir -p $deps
      for f in .devdeps/*.deb; do dpkg -x "$f" $deps; done
      # The -dev packages carry static archives and links to shared libraries they do not ship:
      # link against this system's shared copies instead, so one copy of each is in the process.
      lib=$deps/usr/lib/x86_64-linux-gnu
      for name in sqlite3 z crypto ssl; do
        shared=$(ls /usr/lib/x86_64-linux-gnu/lib$name.so.* /lib/x86_64-linux-gnu/lib$name.so.* 2>/dev/null | head -1)
        if [ -n "$shared" ]; then rm -f "$lib/lib$name.a" "$lib/lib$name.so"; ln -s "$shared" "$lib/lib$name.so"
        else echo "- no shared lib$name here: the static archive is linked" >> "$summary"; fi
      done
      # pkg-config files name /usr as their prefix: point them at the unpacked tree.
      sed -i "s|^prefix=/usr|prefix=$deps/usr|" $lib/pkgconfig/*.pc
      export PKG_CONFIG_PATH=$lib/pkgconfig
      prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
      arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
      cuda_flags=()
      if [ -n "$arch" ]; then
        export TORCH_CUDA_ARCH_LIST="${arch:0:1}.${arch:1}"
        cuda_flags=(-DCMAKE_CUDA_ARCHITECTURES="$arch")
        command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
      fi
      cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix;$deps/usr" \
        "${cuda_flags[@]}" > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
      ninja -C "$build" -k 0 -j"$(nproc)" >> "$out/build.log" 2>&1
      rc=$?
      if [ $rc -ne 0 ] && grep -q "FAILED: .*accelerator.cpp" "$out/build.log"; then
        # Only the CUDA services failed: build without them, so the suite still runs on this card.
        echo "- accelerator.cpp failed with CUDA: rebuilding with -DCOMERA_CUDA=OFF" | tee -a "$summary"
        grep -A12 "FAILED: .*accelerator.cpp" "$out/build.log" | head -40 >> "$summary"
        cmake -S . -B "$build" -DCOMERA_CUDA=OFF >> "$out/build.log" 2>&1
        ninja -C "$build" -k 0 -j"$(nproc)" >> "$out/build.log" 2>&1
        rc=$?
      fi
      echo "- build: rc $rc, $(elapsed)" | tee -a "$summary"
      grep -E "comera:|error:|FAILED" "$out/build.log" | head -40 | tee -a "$summary"
      [ $rc -eq 0 ] || exit 1
      ldd "$build/comera_tests" | grep -E "gomp|sqlite|crypto|libz|stdc|torch|c10|cudart" >> "$out/build.log"
    fi
    cli=$build/comera
    if has test; then
      # The GPU's own tests first (short); the whole suite after the benchmarks.
      timeout 240 ctest --test-dir "$build" -R 'test_cuda|test_remove_tree' --output-on-failure \
        > "$out/cuda_tests.log" 2>&1
      echo "- CUDA tests: rc $?, $(elapsed)" | tee -a "$summary"
      grep -E "tests passed|tests failed|\*\*\*|Failed" "$out/cuda_tests.log" | tee -a "$summary"
    fi
    if has bench; then
      # docs/gpu.md's tables: the six-encoder step, TT against dense, then GaLore and one layer.
      bench=$out/bench.jsonl; : > "$bench"
      for b in 1 8 32 64 128; do
        for method in tt dense; do
          flag=(); [ $method = dense ] && flag=(--dense)
          row=$(timeout 120 "$cli" bench step --device cuda --batch $b --warmup 3 --repeats 10 "${flag[@]}" \
                --json 2>>"$out/bench.log") || row=null
          echo "{\"batch\": $b, \"method\": \"$method\", \"result\": ${row:-null}}" | tr -d '\n' >> "$bench"
          echo >> "$bench"
        done
      done
      for b in 1 8 32 64 128; do
        row=$(timeout 120 "$cli" bench step --device cuda --batch $b --warmup 3 --repeats 10 --method galore \
              --json 2>>"$out/bench.log") || row=null
        echo "{\"batch\": $b, \"method\": \"galore\", \"result\": ${row:-null}}" | tr -d '\n' >> "$bench"
        echo >> "$bench"
      done
      echo "\$ comera bench step --device cuda --batch 32 --profile" >> "$out/bench.log"
      timeout 60 "$cli" bench step --device cuda --batch 32 --warmup 3 --repeats 10 --profile >> "$out/bench.log" 2>&1
      timeout 60 "$cli" bench layer --device cuda --json > "$out/layer.json" 2>>"$out/bench.log"
      for args in "bench ttm --device cuda --ids 4096,40000 --repeats 5" \
                  "tune --device cuda --in-modes 12,8,8 --out-modes 8,8,12 --rank 30 --tokens 4096 --budget-ms 300 --db /tmp/tune.db"; do
        echo "\$ comera $args" >> "$out/bench.log"
        timeout 90 "$cli" $args >> "$out/bench.log" 2>&1
        echo "- \`comera ${args%% --*}\` on cuda: rc $?" | tee -a "$summary"
      done
      echo "- bench: $(elapsed)" | tee -a "$summary"
      python3 - "$bench" "$out/layer.json" >> "$summary" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {(r["batch"], r["method"]): r["result"] for r in rows}
print("\n| batch | TT ms | dense ms | TT speed-up | GaLore ms | TT peak MB | dense peak MB | GaLore peak MB | dense/TT memory |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
cell = lambda r, k, f="%.1f": (f % r[k]) if r else "failed"
for b in sorted({k[0] for k in by}):
    tt, dense, galore = by.get((b, "tt")), by.get((b, "dense")), by.get((b, "galore"))
    ratio = lambda x, y, k: "%.2fx" % (x[k] / y[k]) if x and y and y[k] else ""
    print(f"| {b} | {cell(tt, 'median_ms')} | {cell(dense, 'median_ms')} | {ratio(dense, tt, 'median_ms')} | "
          f"{cell(galore, 'median_ms') if galore else ''} | {cell(tt, 'peak_tensor_mb')} | "
          f"{cell(dense, 'peak_tensor_mb')} | {cell(galore, 'peak_tensor_mb') if galore else ''} | "
          f"{ratio(dense, tt, 'peak_tensor_mb')} |")
try:
    for r in json.load(open(sys.argv[2])):
        print(f"- layer {r['layer']}, {r['tokens']} tokens: dense {r['dense_ms']:.3f} ms, TT {r['tt_ms']:.3f} ms "
              f"({r['speedup']:.2f}x)")
except Exception as e:
    print("- bench layer: no result (" + str(e) + ")")
PY
    fi
    if has test; then
      # The suite goes last and gets what is left of the round (COMERA_SECONDS, default 540), less a
      # minute for a backtrace, so that the round ends before the device tool's limit.
      left=$(( ${COMERA_SECONDS:-540} - ($(date +%s) - start) - 70 )); [ $left -lt 60 ] && left=60
      echo "- suite: $left s left for ctest" >> "$summary"
      OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} timeout $left ctest --test-dir "$build" -j"$(nproc)" --timeout 300 \
        --output-on-failure > "$out/ctest.log" 2>&1
      echo "- ctest: rc $?, $(elapsed)" | tee -a "$summary"
      grep -E "tests passed|tests failed|Total Test time" "$out/ctest.log" | tee -a "$summary"
      grep -E "\*\*\*|Not Run|Skipped" "$out/ctest.log" | head -40 | tee -a "$summary"
      failed=$(sed -n 's/^[0-9]*:\(test_[a-z0-9_]*\).*/\1/p' "$build/Testing/Temporary/LastTestsFailed.log" 2>/dev/null)
      for t in $(echo "$failed" | head -1); do
        echo "=== $t" >> "$out/backtraces.log"
        COMERA_CLI=$cli timeout 60 cuda-gdb -q -batch -ex 'set pagination off' -ex run -ex bt \
          --args "$build/comera_tests" "-#" "[#$t]" 2>&1 | grep -v "Cuda Driver error\|New Thread\|exited\]" \
          | tail -60 >> "$out/backtraces.log"
      done
    fi
    ;;
  -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) echo "usage: $0 fetch|run [STEPS] (--help for what each does)" >&2; exit 2 ;;
esac
