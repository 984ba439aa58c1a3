#!/usr/bin/env bash
# bench_cache.sh -- what loading the on-disk cache costs the shim at start-up: the time
# and heap of xmt_cache_load (the `cache_load` log event: read, parse, hash every record)
# for caches of 1,000 / 10,000 / 100,000 live records, and of 10,000 live records in
# 20,000 lines (the most a compacted cache holds). On the simulated driver, one core
# (taskset -c 0); the figure is the median of ROUNDS runs. Target (issue 10): 10,000 live
# records in at most 5 ms, memory proportional to the live records.
#
#   bash tools/bench/bench_cache.sh [BUILD_DIR]        (default: <repo>/build)
#
# COMPARE=OTHER/libxmatune.so also runs another shim (an older build, say), alternating
# with this one run for run, and prints a second table of the two side by side: this VM's
# speed moves by half from one day to the next, so only a paired comparison says much.
#
# Needs BUILD_DIR/shim/libxmatune.so, BUILD_DIR/simdriver/libcuda.so.1,
# BUILD_DIR/tests/integration/app_rt and BUILD_DIR/tools/bench/bench_loadparts. Prints one
# Markdown table on stdout, then one line from bench_loadparts: the reader alone over the
# 10,000-record cache, and what a first write of fresh memory costs per MiB here.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd) || exit 2
shim=$build/shim/libxmatune.so
app=$build/tests/integration/app_rt
simdir=$build/simdriver
parts=$build/tools/bench/bench_loadparts
for f in "$shim" "$app" "$simdir/libcuda.so.1" "$parts"; do
  [ -e "$f" ] || { echo "bench_cache: $f is missing (cmake --build $build)" >&2; exit 2; }
done
rounds=${ROUNDS:-7}
work=$(mktemp -d /tmp/xmt-bench-cache.XXXXXX)
trap 'rm -rf "$work"' EXIT
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)

# records LIVE LINES FILE: LINES lines naming LIVE identities (the later copies win)
gen() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
live, lines, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with open(path, "w") as f:
    for i in range(lines):
        k = i % live
        f.write(json.dumps({"v": 2, "device": "NVIDIA H200|cc9.0|sm132|drv13000",
                            "kernel": "_Z6kernel%dPfS_i" % (k % 50), "code": "29e34cc3f3d5e881",
                            "entry": "match: kernel%d" % (k % 50), "entry_fp": "a30e88fc0fe86d2f",
                            "key": "%016x" % k, "key_text": "n=%d" % k, "index": k % 7,
                            "label": "BLOCK=%d" % (32 << (k % 6)), "time_ms": 0.0047},
                           separators=(",", ":")) + "\n")
PY
}

# one SHIM CACHE LIVE LOG: "ms heap_bytes" of one load of CACHE by SHIM
one() {
  rm -f "$4"
  env -u LD_PRELOAD LD_LIBRARY_PATH="$simdir" LD_PRELOAD="$1" XMATUNE_MODE=replay \
    XMATUNE_POLICY="$root/tests/integration/policies" XMATUNE_CACHE="$2" \
    XMATUNE_LOG="$4" XMATUNE_VERBOSE=0 "${pin[@]}" "$app" saxpy "$work/out" 1 >/dev/null 2>&1
  local m h n
  read -r m h n < <(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("event") == "cache_load":
        print(e["ms"], e["heap_bytes"], e["records"])
' "$4")
  [ "${n:-0}" = "$3" ] || { echo "bench_cache: $1 loaded ${n:-no} records of $3" >&2; return 1; }
  echo "$m $h"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '| cache | lines | bytes | load (median of %d) | per record | heap | heap per live record |\n' "$rounds"
printf '| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n'
paired=()
for spec in 1000:1000 10000:10000 10000:20000 100000:100000; do
  live=${spec%%:*}
  lines=${spec##*:}
  cache=$work/c-$live-$lines.jsonl
  gen "$live" "$lines" "$cache"
  ms=() cms=()
  heap=0 cheap=0
  for ((r = 0; r < rounds; r++)); do
    read -r m heap < <(one "$shim" "$cache" "$live" "$work/log.jsonl") || exit 1
    ms+=("$m")
    if [ -n "${COMPARE:-}" ]; then
      read -r m cheap < <(one "$COMPARE" "$cache" "$live" "$work/log.jsonl") || exit 1
      cms+=("$m")
    fi
  done
  med=$(median "${ms[@]}")
  bytes=$(stat -c %s "$cache")
  awk -v live="$live" -v lines="$lines" -v bytes="$bytes" -v ms="$med" -v heap="$heap" 'BEGIN {
    printf "| %d live | %d | %.1f MB | %.2f ms | %.0f ns | %.1f MB | %.0f B |\n",
      live, lines, bytes / 1e6, ms, ms * 1e6 / lines, heap / 1e6, heap / live }'
  [ -n "${COMPARE:-}" ] &&
    paired+=("$(awk -v live="$live" -v lines="$lines" -v a="$med" -v ah="$heap" \
      -v b="$(median "${cms[@]}")" -v bh="$cheap" 'BEGIN {
      printf "| %d live | %d | %.2f ms, %.1f MB | %.2f ms, %.1f MB |", live, lines, a, ah / 1e6, b, bh / 1e6 }')")
done
if [ -n "${COMPARE:-}" ]; then
  printf '\nPaired, runs alternating (median of %d each):\n\n' "$rounds"
  printf '| cache | lines | %s | %s |\n| --- | ---: | ---: | ---: |\n' "$shim" "$COMPARE"
  printf '%s\n' "${paired[@]}"
fi
echo
"${pin[@]}" "$parts" "$work/c-10000-10000.jsonl"
