#!/usr/bin/env bash
# Builds the search bench's timer (spaces.cu) with nvcc for sm_90 (the H200) into OUTDIR.
#   bash tools/bench/search/build.sh OUTDIR
#   OUTDIR/spaces --check                          (each space's default config, once)
#   OUTDIR/spaces --out tools/bench/search/data    (times every config: a few minutes)
#   build/tools/bench/search/search_eval tools/bench/search/data/*.tsv
# NVCC (else nvcc on PATH, else /usr/local/cuda/bin/nvcc) and ARCH (default sm_90) override.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$1
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$out"
"$nvcc" -O3 -std=c++17 -arch="${ARCH:-sm_90}" -lineinfo -Xcompiler -Wall \
  -o "$out/spaces" "$here/spaces.cu"
echo "built $out/spaces"
