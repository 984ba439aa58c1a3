#!/usr/bin/env bash
# bench_launch.sh -- what the shim adds to one kernel launch, on the simulated driver.
#
#   bash tools/bench/bench_launch.sh [BUILD_DIR]        (default: <repo>/build)
#   cmake --build build --target bench                  (the same)
#
# Needs BUILD_DIR/tools/bench/bench_launch, BUILD_DIR/shim/libxmatune.so and
# BUILD_DIR/simdriver/libcuda.so.1 (cmake --build BUILD_DIR), and valgrind for the
# instruction counts (without it those columns say "-").
#
# Configurations (bench_launch: vecadd, n = 1, grid 1, block 1, loaded as the runtime does):
#   direct          no shim
#   off             shim, XMATUNE_MODE=off
#   discover        shim, XMATUNE_MODE=discover
#   tune, pass      shim, XMATUNE_MODE=tune, a policy naming only saxpy (never launched):
#                   vecadd has no entry, every launch is a pass-through
#   tune, hit       shim, XMATUNE_MODE=tune, a policy for vecadd tuned at the first launch
#                   (XMATUNE_WARMUP_MS=0, 1 warm-up + 3 timed runs per config); every
#                   later launch is a cache hit rewritten to grid 1 x block 2
#   direct, block 2 no shim, launched as the hit is rewritten (grid 1 x block 2): the
#                   simulated kernel body of the rewritten launch, for reference
# Each runs single-threaded and with 8 threads (each its own stream); the rounds
# interleave the configurations so that machine drift hits all alike, and the figure is
# the median over rounds of each run's median (bench_launch -r). Then each runs twice
# under callgrind, single-threaded, with N1 and N2 launches after the same warm-up:
# instructions per launch = (Ir(N2) - Ir(N1)) / (N2 - N1), counted only inside the
# launch loop (--toggle-collect=launch_loop), so start-up, exit and tuning at the first
# launch cancel out exactly. With CALLGRIND_FUNCS=1 it also prints, per configuration,
# the instructions per launch of every function (the same difference per function).
#
# Environment: ROUNDS (default 7), N_1T (launches per repetition, one thread; 100000),
# N_8T (per thread, 8 threads; 20000), N1/N2 (callgrind, 20000/40000),
# CALLGRIND_FUNCS (0). Prints one Markdown table on stdout; progress on stderr.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd) || exit 2
bench=$build/tools/bench/bench_launch
shim=$build/shim/libxmatune.so
# DRIVER=null measures against tools/bench/nulldrv.c, a driver whose launches return at
# once: the ns columns are then the shim's own time (the simulated driver runs each kernel
# behind a lock and costs ~200 ns, more noise than the shim's whole budget). Its cache hit
# is a pinned config (no benchmark can run on a driver without events).
DRIVER=${DRIVER:-sim}
if [ "$DRIVER" = null ]; then
    simdir=$build/nulldrv
    hitpol=$here/policies/vecadd_pin.yaml
else
    simdir=$build/simdriver
    hitpol=$here/policies/vecadd_hit.yaml
fi
for f in "$bench" "$shim" "$simdir/libcuda.so.1"; do
    if [ ! -e "$f" ]; then
        echo "bench_launch.sh: $f missing (cmake --build $build)" >&2
        exit 2
    fi
done
ROUNDS=${ROUNDS:-7}
N_1T=${N_1T:-100000}
N_8T=${N_8T:-20000}
N1=${N1:-20000}
N2=${N2:-40000}
CALLGRIND_FUNCS=${CALLGRIND_FUNCS:-0}
work=$(mktemp -d "${TMPDIR:-/tmp}/bench_launch.XXXXXX")
trap 'rm -rf "$work"' EXIT

names=(direct off discover pass hit direct_b2)
declare -A label=(
    [direct]="direct (no shim)"
    [off]="shim, \`XMATUNE_MODE=off\`"
    [discover]="shim, \`discover\`"
    [pass]="shim, \`tune\`, no policy for the kernel (pass-through)"
    [hit]="shim, \`tune\`, cache hit (rewritten)"
    [direct_b2]="direct, launched as the hit rewrites it (block 2)"
)

# run NAME COMMAND...: the command with the configuration's environment.
run() {
    local name=$1
    shift
    local -a e=(env -u LD_PRELOAD LD_LIBRARY_PATH="$simdir" XMATUNE_LOG= XMATUNE_CACHE=off
        XMATUNE_VERBOSE=0)
    # Nothing from the caller's XMATUNE_*/SIMCUDA_* settings leaks in.
    local v
    for v in $(env | sed -n 's/^\(\(XMATUNE\|SIMCUDA\)_[A-Z_]*\)=.*/\1/p'); do e+=(-u "$v"); done
    case $name in
    direct) "${e[@]}" "$@" ;;
    direct_b2) "${e[@]}" "$@" -b 2 ;;
    off) "${e[@]}" LD_PRELOAD="$shim" XMATUNE_MODE=off "$@" ;;
    discover) "${e[@]}" LD_PRELOAD="$shim" XMATUNE_MODE=discover "$@" ;;
    pass) "${e[@]}" LD_PRELOAD="$shim" XMATUNE_MODE=tune XMATUNE_POLICY="$here/policies/other_kernel.yaml" "$@" ;;
    hit) "${e[@]}" LD_PRELOAD="$shim" XMATUNE_MODE=tune XMATUNE_WARMUP_MS=0 \
        XMATUNE_POLICY="$hitpol" "$@" ;;
    esac
}

median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# ---- host time
for r in $(seq 1 "$ROUNDS"); do
    echo "bench_launch.sh: round $r/$ROUNDS" >&2
    for n in "${names[@]}"; do
        for t in 1 8; do
            if [ "$t" = 1 ]; then cnt=$N_1T; else cnt=$N_8T; fi
            line=$(run "$n" "$bench" -n "$cnt" -t "$t" -r 5 -w 1000 2>"$work/err") || {
                echo "bench_launch.sh: $n, $t threads failed:" >&2
                cat "$work/err" >&2
                exit 1
            }
            echo "$line" | sed -n 's/.*median_ns=\([0-9.]*\).*/\1/p' >>"$work/ns.$n.$t"
        done
    done
done
declare -A ns1 ns8
for n in "${names[@]}"; do
    ns1[$n]=$(median <"$work/ns.$n.1")
    ns8[$n]=$(median <"$work/ns.$n.8")
done

# ---- instructions (callgrind)
declare -A ir
have_vg=0
if command -v valgrind >/dev/null; then have_vg=1; fi
for n in "${names[@]}"; do
    ir[$n]=-
    [ $have_vg = 1 ] || continue
    echo "bench_launch.sh: callgrind $n" >&2
    ok=1
    for cnt in "$N1" "$N2"; do
        run "$n" valgrind --tool=callgrind --toggle-collect=launch_loop \
            --callgrind-out-file="$work/cg.$n.$cnt" "$bench" -n "$cnt" -t 1 -r 1 -w 100 \
            >/dev/null 2>"$work/err" || { ok=0; cat "$work/err" >&2; }
    done
    [ $ok = 1 ] || continue
    tot() { sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$1"; }
    a=$(tot "$work/cg.$n.$N1")
    b=$(tot "$work/cg.$n.$N2")
    ir[$n]=$(awk -v a="$a" -v b="$b" -v d=$((N2 - N1)) 'BEGIN {printf "%.1f", (b - a) / d}')
done

# ---- the table
diff_of() { # A B: A - B, or "-" if either is not a number
    awk -v a="$1" -v b="$2" 'BEGIN {if (a == "-" || b == "-") print "-"; else printf "%+.1f", a - b}'
}
when=$(date -u +%Y-%m-%d)
cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
if [ "$DRIVER" = null ]; then drv="the null driver (tools/bench/nulldrv.c: launches return at once)"; else drv="the simulated driver"; fi
echo "Launch path on $drv, $when, $(nproc) CPUs ($cpu), $(uname -r)."
echo "bench_launch: vecadd, n = 1, grid 1, block 1, \`cuLaunchKernel\` from \`cuGetProcAddress_v2\`, CUkernel handle."
echo "ns: wall time / launches, median of $ROUNDS interleaved rounds, each the median of 5 repetitions"
echo "($N_1T launches; with 8 threads $N_8T per thread, one stream each, all at once: per-thread time per launch)."
echo "Ir: callgrind instructions per launch = (Ir(N=$N2) - Ir(N=$N1)) / $((N2 - N1)), counted inside the launch loop only"
echo "(\`--toggle-collect=launch_loop\`), so start-up, tuning and exit cancel out; the simulated driver's own cost is in \"direct\"."
echo "\"added\" is against direct; for the cache hit also against the pass-through (the issue-5 target)."
echo
echo "| configuration | Ir / launch | added Ir | ns / launch, 1 thread | added ns | ns / launch, 8 threads | added ns |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for n in "${names[@]}"; do
    printf '| %s | %s | %s | %.1f | %s | %.1f | %s |\n' "${label[$n]}" "${ir[$n]}" \
        "$(diff_of "${ir[$n]}" "${ir[direct]}")" "${ns1[$n]}" "$(diff_of "${ns1[$n]}" "${ns1[direct]}")" \
        "${ns8[$n]}" "$(diff_of "${ns8[$n]}" "${ns8[direct]}")"
done
printf '| **cache hit over pass-through** | | %s | | %s | | %s |\n' \
    "$(diff_of "${ir[hit]}" "${ir[pass]}")" "$(diff_of "${ns1[hit]}" "${ns1[pass]}")" \
    "$(diff_of "${ns8[hit]}" "${ns8[pass]}")"
printf '| cache hit over pass-through, less the wider simulated body (block 2 − block 1, direct) | | %s | | %s | | %s |\n' \
    "$(diff_of "$(diff_of "${ir[hit]}" "${ir[pass]}")" "$(diff_of "${ir[direct_b2]}" "${ir[direct]}")")" \
    "$(diff_of "$(diff_of "${ns1[hit]}" "${ns1[pass]}")" "$(diff_of "${ns1[direct_b2]}" "${ns1[direct]}")")" \
    "$(diff_of "$(diff_of "${ns8[hit]}" "${ns8[pass]}")" "$(diff_of "${ns8[direct_b2]}" "${ns8[direct]}")")"
echo
echo "Targets: a kernel no policy names (off, discover?, tune pass-through) at most +60 Ir and +15 ns;"
echo "a cache hit at most +300 Ir and +60 ns over a pass-through."

# ---- per-function breakdown: where the added instructions go
# perfn NAME: "Ir-per-launch<TAB>function" for every function of NAME's two runs.
perfn() {
    local cnt
    for cnt in "$N1" "$N2"; do
        callgrind_annotate --auto=no --inclusive=no --threshold=100 "$work/cg.$1.$cnt" 2>/dev/null |
            sed -n 's/^ *\([0-9,]*\) ([^)]*) *\(.*\)$/\1\t\2/p' | tr -d ',' |
            sed 's/ \[[^]]*\]$//' | grep -v 'PROGRAM TOTALS' | sed "s/^/$cnt\t/"
    done | awk -F'\t' -v n2="$N2" -v n1="$N1" '
        { v[$3] += ($1 == n2 ? $2 : -$2) }
        END { for (f in v) printf "%.1f\t%s\n", v[f] / (n2 - n1), f }'
}
if [ "$CALLGRIND_FUNCS" = 1 ] && [ $have_vg = 1 ] && command -v callgrind_annotate >/dev/null &&
    [ -e "$work/cg.direct.$N2" ]; then
    perfn direct >"$work/fn.direct"
    for n in off discover pass hit; do
        [ -e "$work/cg.$n.$N2" ] || continue
        perfn "$n" >"$work/fn.$n"
        echo
        echo "Where the added instructions go, ${label[$n]}: self instructions per launch of each"
        echo "function, minus direct's (functions that differ by 0.5 or more; inlined code is"
        echo "charged to the file:function callgrind names)."
        echo
        echo "| added Ir / launch | function |"
        echo "| ---: | --- |"
        awk -F'\t' 'NR == FNR { d[$2] = $1; next }
            { a = $1 - d[$2]; seen[$2] = 1; if (a >= 0.5 || a <= -0.5) printf "%.1f\t%s\n", a, $2 }
            END { for (f in d) if (!(f in seen) && d[f] >= 0.5) printf "%.1f\t%s\n", -d[f], f }' \
            "$work/fn.direct" "$work/fn.$n" | sort -t$'\t' -k1,1gr |
            awk -F'\t' '{printf "| %+.1f | `%s` |\n", $1, $2}'
    done
fi
