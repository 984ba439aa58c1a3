#!/usr/bin/env bash
# bench_threads.sh -- the launch path under threads: CPU ns per launch with 1, 8 and 16
# threads, one per core, on the null driver (issue 13, item 3).
#
#   bash tools/bench/bench_threads.sh [BUILD_DIR]        (default: <repo>/build)
#
# Needs BUILD_DIR/tools/bench/bench_launch, BUILD_DIR/shim/libxmatune.so and
# BUILD_DIR/nulldrv/libcuda.so.1 (cmake --build BUILD_DIR --target bench_launch nulldrv
# xmatune). Configurations as bench_launch.sh's, on the null driver (launches return at
# once, and it shares no cache line between threads): direct (no shim), the shim in
# `discover`, in `tune` for a kernel no policy names (pass-through) and in `tune` with
# every launch a cache hit (vecadd_pin.yaml: pinned to grid 1 x block 2, rewritten).
# Every thread launches vecadd back to back on its own stream, all threads at once,
# each pinned to a CPU of its own (bench_launch -p); a thread count larger than the CPUs
# the process may use is skipped and says so. Figure: wall time / launches per thread
# (bench_launch: first thread's start to last thread's end), the median of 5 repetitions,
# then the median over ROUNDS rounds that interleave the configurations.
#
# Environment: THREADS (default "1 8 16"), ROUNDS (5), N (launches per thread per
# repetition, 200000). Prints one Markdown table and the targets (8 threads: pass-through
# at most +15 ns over direct, a cache hit at most +60 ns over the pass-through, discover at
# most +200 ns over direct); exits 1 when a target is missed, 2 when something is missing.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd) || exit 2
bench=$build/tools/bench/bench_launch
shim=$build/shim/libxmatune.so
drv=$build/nulldrv
for f in "$bench" "$shim" "$drv/libcuda.so.1"; do
    if [ ! -e "$f" ]; then
        echo "bench_threads.sh: $f missing (cmake --build $build --target bench_launch nulldrv xmatune)" >&2
        exit 2
    fi
done
THREADS=${THREADS:-1 8 16}
ROUNDS=${ROUNDS:-5}
N=${N:-200000}
ncpu=$(nproc)
work=$(mktemp -d "${TMPDIR:-/tmp}/bench_threads.XXXXXX")
trap 'rm -rf "$work"' EXIT

names=(direct pass hit discover)
declare -A label=(
    [direct]="direct (no shim)"
    [pass]="shim, \`tune\`, no policy for the kernel (pass-through)"
    [hit]="shim, \`tune\`, cache hit (pinned, rewritten)"
    [discover]="shim, \`discover\`"
)

run() { # NAME COMMAND...
    local name=$1
    shift
    local -a e=(env -u LD_PRELOAD LD_LIBRARY_PATH="$drv" XMATUNE_LOG= XMATUNE_CACHE=off XMATUNE_VERBOSE=0)
    local v
    for v in $(env | sed -n 's/^\(\(XMATUNE\|SIMCUDA\)_[A-Z_]*\)=.*/\1/p'); do e+=(-u "$v"); done
    case $name in
    direct) "${e[@]}" "$@" ;;
    pass) "${e[@]}" LD_PRELOAD="$shim" XMATUNE_MODE=tune XMATUNE_POLICY="$here/policies/other_kernel.yaml" "$@" ;;
    hit) "${e[@]}" LD_PRELOAD="$shim" XMATUNE_MODE=tune XMATUNE_WARMUP_MS=0 \
        XMATUNE_POLICY="$here/policies/vecadd_pin.yaml" "$@" ;;
    discover) "${e[@]}" LD_PRELOAD="$shim" XMATUNE_MODE=discover "$@" ;;
    esac
}

median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

ts=()
for t in $THREADS; do
    if [ "$t" -gt "$ncpu" ]; then
        echo "bench_threads.sh: $t threads skipped: only $ncpu CPUs to pin them to" >&2
        continue
    fi
    ts+=("$t")
done
[ ${#ts[@]} -gt 0 ] || { echo "bench_threads.sh: no thread count fits $ncpu CPUs" >&2; exit 2; }

for r in $(seq 1 "$ROUNDS"); do
    echo "bench_threads.sh: round $r/$ROUNDS" >&2
    for t in "${ts[@]}"; do
        for n in "${names[@]}"; do
            line=$(run "$n" "$bench" -n "$N" -t "$t" -r 5 -w 1000 -p 2>"$work/err") || {
                echo "bench_threads.sh: $n, $t threads failed:" >&2
                cat "$work/err" >&2
                exit 1
            }
            echo "$line" | sed -n 's/.*median_ns=\([0-9.]*\).*/\1/p' >>"$work/ns.$n.$t"
        done
    done
done
declare -A ns
for t in "${ts[@]}"; do
    for n in "${names[@]}"; do ns[$n.$t]=$(median <"$work/ns.$n.$t"); done
done

sub() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "-" || b == "-") print "-"; else printf "%+.1f", a - b}'; }
cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
echo "Launch path under threads on the null driver (tools/bench/nulldrv.c), $(date -u '+%Y-%m-%d %H:%M') UTC,"
echo "$ncpu CPUs ($cpu), $(uname -r); shim $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')."
echo "bench_launch -p: each thread pinned to a CPU of its own, its own stream, $N launches of vecadd (grid 1,"
echo "block 1) per repetition, all threads at once; ns = wall time / launches per thread, the median of 5"
echo "repetitions, then of $ROUNDS interleaved rounds. \"added\" is against direct with as many threads."
echo "Command: THREADS=\"$THREADS\" ROUNDS=$ROUNDS N=$N bash tools/bench/bench_threads.sh"
echo
hdr="| configuration |"
sep="| --- |"
for t in "${ts[@]}"; do
    hdr+=" ns, $t thr | added |"
    sep+=" ---: | ---: |"
done
echo "$hdr"
echo "$sep"
for n in "${names[@]}"; do
    row="| ${label[$n]} |"
    for t in "${ts[@]}"; do row+=" ${ns[$n.$t]} | $(sub "${ns[$n.$t]}" "${ns[direct.$t]}") |"; done
    echo "$row"
done
row="| **cache hit over pass-through** |"
for t in "${ts[@]}"; do row+=" | $(sub "${ns[hit.$t]}" "${ns[pass.$t]}") |"; done
echo "$row"
echo

# The targets, with 8 threads (or the largest count run, when 8 could not be).
tt=8
[ -n "${ns[direct.8]:-}" ] || tt=${ts[-1]}
rc=0
check() { # WHAT VALUE LIMIT
    local ok
    ok=$(awk -v v="$2" -v l="$3" 'BEGIN {print (v != "-" && v + 0 <= l + 0) ? "met" : "MISSED"}')
    [ "$ok" = met ] || rc=1
    echo "- $1 with $tt threads: $2 ns (target at most +$3): $ok"
}
check "pass-through over direct" "$(sub "${ns[pass.$tt]}" "${ns[direct.$tt]}")" 15
check "cache hit over pass-through" "$(sub "${ns[hit.$tt]}" "${ns[pass.$tt]}")" 60
check "discover over direct" "$(sub "${ns[discover.$tt]}" "${ns[direct.$tt]}")" 200
[ "$tt" = 8 ] || { echo "- (8 threads could not run here: the targets above are for $tt)"; }
exit $rc
