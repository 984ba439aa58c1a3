#!/usr/bin/env bash
# Runs the suite (scripts/test.sh, or the command given) with CPU-bound processes beside
# it, as on a machine busy with other work: no test may depend on the machine's speed, and
# this is how that is shown. XMATUNE_LOAD (default 2) busy loops run for the whole time;
# XMATUNE_LOAD_RUNS (default 1) runs the command that many times in a row, stopping at the
# first failure. The busy loops are stopped however it ends.
#   scripts/test-under-load.sh                                     # scripts/test.sh, once
#   XMATUNE_LOAD_RUNS=3 scripts/test-under-load.sh                 # three times in a row
#   scripts/test-under-load.sh ctest --test-dir build -j2 --output-on-failure
set -euo pipefail
cd "$(dirname "$0")/.."
load=${XMATUNE_LOAD:-2}
runs=${XMATUNE_LOAD_RUNS:-1}
[ $# -gt 0 ] || set -- bash scripts/test.sh

busy=()
stop() {
  for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${busy[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for ((i = 0; i < load; i++)); do
  sh -c 'while :; do :; done' &
  busy+=($!)
done

for ((r = 1; r <= runs; r++)); do
  echo "test-under-load: run $r of $runs, $load busy loops beside it: $*" >&2
  "$@"
done
echo "test-under-load: $runs run(s) passed under load" >&2
