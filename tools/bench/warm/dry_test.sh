#!/usr/bin/env bash
# dry_test.sh -- run.sh end to end on the simulated driver (ctest bench_warm_dry): two
# app_rt scenarios three ways, then the report is checked for what it must hold whatever
# the shim decides: each program's wall row with both ratios, its LAUNCHES row, a shim-work
# row whose first run tuned at least one key, outputs the same as without the shim, and the
# summary.
#   bash tools/bench/warm/dry_test.sh SHIM WORK
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
shim=$1 work=$2
rm -rf "$work"
out=$(bash "$here/run.sh" --dry --shim "$shim" --work "$work" --programs "dry_saxpy dry_hop" 2>&1)
rc=$?
echo "$out"
fail=0
need() { # REGEX WHAT
    if ! grep -Eq -- "$1" <<<"$out"; then
        echo "dry_test: missing $2 (/$1/)"
        fail=1
    fi
}
[ "$rc" = 0 ] || { echo "dry_test: run.sh exited $rc"; fail=1; }
need "^- programs' own figures, warm/plain: none$" "the summary (no ratios of counts)"
need "^- warm runs that tuned a key: " "the summary's warm runs"
n='[0-9][0-9.]*'
for p in dry_saxpy dry_hop; do
    need "^\| $p \| xmatune@[0-9a-f?]+ \| wall \(s\) \| $n \| $n \| $n \| $n \| $n \|$" "$p's wall row"
    need "^\|  \|  \| LAUNCHES \| 3 \| 3 \| - \| 3 \| - \|$" "$p's LAUNCHES row"
    need "^\| $p \| [0-9]+ / [0-9]+ \| [1-9][0-9]* / [0-9]+ \| [0-9]+ / [0-9]+ \| [0-9]+ / [0-9]+ \| ($n|-) \| ($n \([0-9]+\)|-) \| same \|$" "$p's shim-work row"
done
for m in plain first warm; do
    [ -s "$work/logs/dry_saxpy.$m.stdout" ] || { echo "dry_test: no $m stdout"; fail=1; }
done
if [ ! -s "$work/logs/dry_saxpy.first.jsonl" ] || [ ! -s "$work/logs/dry_saxpy.cache.jsonl" ]; then
    echo "dry_test: the first run left no log or no cache"
    fail=1
fi
[ "$fail" = 0 ] && echo "dry_test: ok"
exit "$fail"
