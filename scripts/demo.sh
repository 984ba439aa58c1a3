#!/usr/bin/env bash
# The demo: a program under the shim, first in discover mode (what does it launch, and
# can xmatune see it?), then in tune mode (benchmark the policy's configs, rewrite every
# later launch), its log as a report, a replay from the cache it made (no benchmark), and
# autotune: tuning with no policy at all (XMATUNE_AUTO=1). On a machine with an NVIDIA GPU it runs examples/gpu/saxpy.cu on the
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
  policy=$PWD/examples/gpu/saxpy.yaml
  env_extra=()
else
  echo "== no GPU here: a program on the simulated driver (tests/simdriver)"
  run=("$(cd "$build" && pwd)/tests/integration/app_rt" basic "$work/out")
  # autotune's program: one kernel (basic's ten under auto take a while: smem_rev's
  # faulting candidates each restart the trial helper)
  run_auto=("$(cd "$build" && pwd)/tests/integration/app_rt" saxpy "$work/out")
  policy=$PWD/tests/integration/policies
  # The simulated driver has no GPU clock to raise: the clock warm-up before the first
  # candidate (XMATUNE_WARMUP_MS, 50 ms a key by default) would only spend CPU time.
  env_extra=(LD_LIBRARY_PATH="$(cd "$build" && pwd)/simdriver" XMATUNE_WARMUP_MS=0)
fi
[ -n "${run_auto+x}" ] || run_auto=("${run[@]}")

xmatune=$(cd "$build" && pwd)/tools/xmatune
# Each step prints the complete command it runs, quoted, so that it can be pasted into a
# shell as it is: the environment it needs (the simulated driver's LD_LIBRARY_PATH), the
# command by its full path. `xmatune run` and `discover` set LD_PRELOAD themselves.
step() {
  local title=$1
  shift
  echo
  echo "== $title"
  printf '$'
  printf ' %q' "$@"
  echo
  env "$@"
}

step "1. discover: what the program launches, and a policy skeleton for its kernels" \
  "${env_extra[@]}" "$xmatune" discover --log "$work/discover.jsonl" --stub "$work/stub.yaml" \
  -- "${run[@]}"
echo "(the skeleton, to fill in: $work/stub.yaml; the policy used below: $policy)"
step "2. tune: benchmark the policy's configs once per key, rewrite every later launch" \
  "${env_extra[@]}" "$xmatune" run --tune --policy "$policy" --log "$work/tune.jsonl" \
  --cache "$work/cache.jsonl" -v -- "${run[@]}" 2>&1 | grep -v '^xmatune: XMATUNE_'
step "3. the tuning log, as a report" "$xmatune" report "$work/tune.jsonl" || true
step "4. replay: every key decided from the cache of step 2, never benchmarked" \
  "${env_extra[@]}" "$xmatune" run --replay --policy "$policy" --log "$work/replay.jsonl" \
  --cache "$work/cache.jsonl" -v -- "${run[@]}" 2>&1 | grep -v '^xmatune: XMATUNE_'
step "5. autotune: no policy at all; the launch idioms tried on each key, a policy written" \
  "${env_extra[@]}" "$xmatune" autotune --log "$work/auto.jsonl" --write-policy "$work/auto.yaml" \
  --cache "$work/auto-cache.jsonl" -- "${run_auto[@]}" 2>&1 | grep -v '^xmatune: XMATUNE_'
echo
echo "Logs, the skeleton, the caches and autotune's policy are in $work (schema: docs/log.md)."
