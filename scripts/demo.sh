#!/usr/bin/env bash
# The demo: a program under the shim, first in discover mode (what does it launch, and
# can xmatune see it?), then in tune mode (benchmark the policy's configs, rewrite every
# later launch). On a machine with an NVIDIA GPU it runs examples/gpu/saxpy.cu on the
# GPU; without one, a program on the simulated driver (tests/simdriver), which runs the
# same launch path on the CPU.
#
# XMATUNE_DEMO_BUILD=DIR runs it with a build folder made elsewhere (DIR/shim/libxmatune.so,
# DIR/tools/xmatune), for a GPU machine that cannot install packages; then nothing is
# installed or built here but the GPU program.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${XMATUNE_DEMO_BUILD:-}" ]; then
  build=$XMATUNE_DEMO_BUILD
else
  build=build
  bash scripts/deps.sh
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j"$(nproc)" >/dev/null
fi
shim=$(cd "$build" && pwd)/shim/libxmatune.so
work=$(mktemp -d /tmp/xmatune-demo.XXXXXX)

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "== an NVIDIA GPU is here: examples/gpu/saxpy on it"
  nvcc -O2 -gencode arch=compute_90,code=[sm_90,compute_90] -gencode arch=compute_80,code=sm_80 \
    -o "$work/saxpy" examples/gpu/saxpy.cu
  run=("$work/saxpy" "$work/out")
  policy=examples/gpu/saxpy.yaml
  env_extra=()
else
  echo "== no GPU here: a program on the simulated driver (tests/simdriver)"
  run=("$build/tests/integration/app_rt" basic "$work/out")
  policy=tests/integration/policies
  env_extra=(LD_LIBRARY_PATH="$(cd "$build" && pwd)/simdriver" XMATUNE_WARMUP_MS=0)
fi

echo
echo "== 1. discover: XMATUNE_MODE=discover ${run[*]}"
env "${env_extra[@]}" LD_PRELOAD="$shim" XMATUNE_MODE=discover XMATUNE_POLICY="$policy" \
  XMATUNE_LOG="$work/discover.jsonl" "${run[@]}"
echo
echo "== 2. tune: XMATUNE_POLICY=$policy XMATUNE_VERBOSE=1 ${run[*]}"
env "${env_extra[@]}" LD_PRELOAD="$shim" XMATUNE_POLICY="$policy" XMATUNE_VERBOSE=1 \
  XMATUNE_LOG="$work/tune.jsonl" XMATUNE_CACHE="$work/cache.jsonl" "${run[@]}" 2>&1 |
  grep -v '^xmatune: XMATUNE_'
echo
echo "== 3. the tuning log, as a report: xmatune report $work/tune.jsonl"
"$build/tools/xmatune" report "$work/tune.jsonl" || true
echo
echo "Logs and the cache are in $work (schema: docs/log.md)."
