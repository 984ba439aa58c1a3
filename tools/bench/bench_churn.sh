#!/usr/bin/env bash
# bench_churn.sh -- what module churn costs under the shim (issue 11, item 4).
#
#   bash tools/bench/bench_churn.sh [BUILD_DIR]          (default: <repo>/build)
#   DRIVER=sim bash tools/bench/bench_churn.sh           (on the simulated driver)
#
# Runs BUILD_DIR/tools/bench/bench_churn: a module kept loaded, then CYCLES times load a
# second module (a cubin linked once from embedded PTX; the PTX text on the simulated
# driver), get its kernel, launch it, synchronize, unload it. By default against the
# machine's own libcuda.so.1 (a GPU); DRIVER=sim uses BUILD_DIR/simdriver.
#
# Configurations:
#   direct     no shim
#   off        shim, XMATUNE_MODE=off
#   discover   shim, XMATUNE_MODE=discover
#   pass       shim, tune, a policy that names another kernel (vecadd passes through)
#   tuned      shim, tune, a policy for vecadd: tuned at the first cycle; every later
#              cycle's fresh record finds the winner in the in-memory cache
# Each runs ROUNDS times (interleaved), the figure is the median ns per cycle; RSS is the
# resident memory after a tenth of the cycles and at the end (of the median run).
#
# Environment: CYCLES (100000), ROUNDS (3). Prints one Markdown table on stdout.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd) || exit 2
bench=$build/tools/bench/bench_churn
shim=$build/shim/libxmatune.so
DRIVER=${DRIVER:-real}
CYCLES=${CYCLES:-100000}
ROUNDS=${ROUNDS:-3}
libpath=${LD_LIBRARY_PATH:-}
if [ "$DRIVER" = sim ]; then libpath=$build/simdriver; fi
for f in "$bench" "$shim"; do
    if [ ! -e "$f" ]; then
        echo "bench_churn.sh: $f missing (cmake --build $build)" >&2
        exit 2
    fi
done
work=$(mktemp -d "${TMPDIR:-/tmp}/bench_churn.XXXXXX")
trap 'rm -rf "$work"' EXIT

names=(direct off discover pass tuned)
declare -A label=(
    [direct]="direct (no shim)"
    [off]="shim, \`XMATUNE_MODE=off\`"
    [discover]="shim, \`discover\`"
    [pass]="shim, \`tune\`, no policy for the kernel"
    [tuned]="shim, \`tune\`, a policy for the kernel"
)

run() {
    local name=$1
    shift
    local -a e=(env -u LD_PRELOAD LD_LIBRARY_PATH="$libpath" XMATUNE_LOG= XMATUNE_CACHE=off
        XMATUNE_VERBOSE=0 XMATUNE_WARMUP_MS=0)
    local v
    for v in $(env | sed -n 's/^\(\(XMATUNE\|SIMCUDA\)_[A-Z_]*\)=.*/\1/p'); do e+=(-u "$v"); done
    case $name in
    direct) "${e[@]}" "$@" ;;
    off) "${e[@]}" LD_PRELOAD="$shim" XMATUNE_MODE=off "$@" ;;
    discover) "${e[@]}" LD_PRELOAD="$shim" XMATUNE_MODE=discover "$@" ;;
    pass) "${e[@]}" LD_PRELOAD="$shim" XMATUNE_MODE=tune \
        XMATUNE_POLICY="$here/policies/other_kernel.yaml" "$@" ;;
    tuned) "${e[@]}" LD_PRELOAD="$shim" XMATUNE_MODE=tune \
        XMATUNE_POLICY="$here/policies/vecadd_churn.yaml" "$@" ;;
    esac
}

field() { sed -n "s/.*$1=\([0-9.a-z]*\).*/\1/p"; }

for r in $(seq 1 "$ROUNDS"); do
    echo "bench_churn.sh: round $r/$ROUNDS" >&2
    for n in "${names[@]}"; do
        line=$(run "$n" "$bench" -n "$CYCLES" 2>"$work/err") || {
            echo "bench_churn.sh: $n failed:" >&2
            cat "$work/err" >&2
            exit 1
        }
        if [ "$(echo "$line" | field ok)" != 1 ]; then
            echo "bench_churn.sh: $n: wrong results: $line" >&2
            exit 1
        fi
        echo "$(echo "$line" | field ns_per_cycle) $(echo "$line" | field rss_kb_warm)" \
            "$(echo "$line" | field rss_kb_end) $(echo "$line" | field image)" >>"$work/$n"
    done
done

# The median run by ns per cycle: its four fields.
med() { sort -g "$1" | awk '{l[NR]=$0} END {print l[int((NR+1)/2)]}'; }
read -r base _ _ image < <(med "$work/direct")
echo "Module churn: $CYCLES cycles of load ($image) / get function / launch / synchronize /"
echo "unload beside a module kept loaded; driver: $DRIVER; median of $ROUNDS rounds."
echo
echo "| configuration | ns per cycle | added ns per cycle | RSS after 10% (KiB) | RSS at end (KiB) | growth (KiB) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for n in "${names[@]}"; do
    read -r ns warm end _ < <(med "$work/$n")
    awk -v l="${label[$n]}" -v ns="$ns" -v b="$base" -v w="$warm" -v e="$end" \
        'BEGIN {printf "| %s | %.0f | %+.0f | %d | %d | %+d |\n", l, ns, ns - b, w, e, e - w}'
done
