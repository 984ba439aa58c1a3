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
#   auto, hit       shim, XMATUNE_AUTO=1 (no policy), XMATUNE_AUTO_MIN_US=0 (the tiny kernel
#                   is not passed through as too short), tuned at the first launch in the
#                   trial helper (its derived space: the cost model's winner is grid 1 x
#                   block 128); every later launch is a hit rewritten to it
#   auto, own stays the same, launched grid 1 x block 128: the program's own config stays
#                   (nothing is faster), and every later launch is a hit that keeps it
#   auto, passed    the same, XMATUNE_AUTO_MIN_US=1000000: the key's session finds the kernel
#                   too short, and it passes through from then on (the pass-through path)
#   direct, block 128  no shim, launched as auto's hit is rewritten (and as "own stays"
#                   is launched)
#   ..., -a         bench_launch -a: two sets of buffers in turn (pointers that change at
#                   every launch, the same key): the per-thread memo compares only the
#                   arguments the entry's expressions read (not these pointers), so it still
#                   answers; before 2026-12-05 every such launch missed it and took the slow
#                   path (key, lookup, the winner's config): pass-through, policy hit, auto
#                   hit and auto own stays, each with its direct run
# The auto rows need a trial helper (BUILD_DIR/trial/xmatune-trial) and events to time
# with: they always run on the simulated driver, also with DRIVER=null, and they run with
# XMATUNE_RECHECKS=0 (a re-check session that falls between the two callgrind runs would
# be counted per launch: ~120 instructions at these counts, a share that shrinks eightfold
# with each re-check, since they come at a key's launches 2, 10, 74, 586, 4682, 37450, ...). Before
# measuring, one short run of each auto and hit configuration with XMATUNE_LOG checks
# (stderr) that its key was tuned in the helper and decided as said (a hit: that its
# launches were rewritten), and fails otherwise.
# Each runs single-threaded and with 8 threads (each its own stream); the rounds
# interleave the configurations so that machine drift hits all alike, and the figure is
# the median over rounds of each run's median (bench_launch -r). Then each runs twice
# under callgrind, single-threaded, with N1 and N2 launches after the same warm-up:
# instructions per launch = (Ir(N2) - Ir(N1)) / (N2 - N1), counted only inside the
# launch loop (--toggle-collect=launch_loop), so start-up, exit and tuning at the first
# launch cancel out exactly. With CALLGRIND_FUNCS=1 it also prints, per configuration,
# the instructions per launch of every function (the same difference per function).
# "added" is against the row's own direct run: the same driver, launched with the dims the
# shim launches (a hit's rewritten dims) and the same buffers (-a), so that what the
# simulated kernel body costs cancels out; "over pass-through" subtracts the pass-through's
# added figure (the same on both drivers: the shim's instructions do not depend on them).
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

names=(direct off discover pass hit direct_b2 auto_hit auto_own auto_passed direct_b128
    direct_a pass_a hit_a direct_b2_a auto_hit_a auto_own_a direct_b128_a)
declare -A label=(
    [direct]="direct (no shim)"
    [off]="shim, \`XMATUNE_MODE=off\`"
    [discover]="shim, \`discover\`"
    [pass]="shim, \`tune\`, no policy for the kernel (pass-through)"
    [hit]="shim, \`tune\`, cache hit (rewritten)"
    [direct_b2]="direct, launched as the hit rewrites it (block 2)"
    [auto_hit]="shim, auto, hit (rewritten to block 128)"
    [auto_own]="shim, auto, hit, the program's own config stays (block 128)"
    [auto_passed]="shim, auto, kernel passed through (\`XMATUNE_AUTO_MIN_US\`)"
    [direct_b128]="direct, block 128"
    [direct_a]="direct, \`-a\`"
    [pass_a]="pass-through, \`-a\`"
    [hit_a]="cache hit, \`-a\` (pointers move)"
    [direct_b2_a]="direct, block 2, \`-a\`"
    [auto_hit_a]="auto, hit, \`-a\` (pointers move)"
    [auto_own_a]="auto, own config stays, \`-a\` (pointers move)"
    [direct_b128_a]="direct, block 128, \`-a\`"
)
# Each row's own direct run (what "added" is against) and, for the hits, the pass-through
# of the same buffers (what "over pass-through" is against).
declare -A base=([direct]=direct [off]=direct [discover]=direct [pass]=direct [hit]=direct_b2
    [direct_b2]=direct [auto_hit]=direct_b128 [auto_own]=direct_b128 [auto_passed]=direct
    [direct_b128]=direct [direct_a]=direct_a [pass_a]=direct_a [hit_a]=direct_b2_a
    [direct_b2_a]=direct_a [auto_hit_a]=direct_b128_a [auto_own_a]=direct_b128_a
    [direct_b128_a]=direct_a)
declare -A passof=([hit]=pass [auto_hit]=pass [auto_own]=pass [auto_passed]=pass [hit_a]=pass_a
    [auto_hit_a]=pass_a [auto_own_a]=pass_a)
auto_env=(XMATUNE_AUTO=1 XMATUNE_WARMUP_MS=0 XMATUNE_RECHECKS=0)
# The auto rows and their direct runs: always on the simulated driver (see above); with
# DRIVER=null, the auto rows' direct runs are their own (sdirect_*), on it too.
is_auto() { case $1 in auto_*) return 0 ;; esac; return 1; }
if [ "$DRIVER" = null ]; then
    names+=(sdirect sdirect_b128 sdirect_b128_a)
    label+=([sdirect]="direct, simulated driver" [sdirect_b128]="direct, block 128, simulated driver"
        [sdirect_b128_a]="direct, block 128, \`-a\`, simulated driver")
    base+=([auto_hit]=sdirect_b128 [auto_own]=sdirect_b128 [auto_passed]=sdirect
        [auto_hit_a]=sdirect_b128_a [auto_own_a]=sdirect_b128_a [sdirect]=sdirect
        [sdirect_b128]=sdirect [sdirect_b128_a]=sdirect_b128_a)
fi
if [ ! -x "$build/trial/xmatune-trial" ] || [ ! -e "$build/simdriver/libcuda.so.1" ]; then
    echo "bench_launch.sh: no trial helper or simulated driver in $build: the auto rows are left out" >&2
    names=($(printf '%s\n' "${names[@]}" | grep -v -e '^auto_' -e '^sdirect'))
fi

# run NAME COMMAND...: the command with the configuration's environment.
run() {
    local name=$1
    shift
    local dir=$simdir
    case $name in auto_* | sdirect*) dir=$build/simdriver ;; esac
    local -a e=(env -u LD_PRELOAD LD_LIBRARY_PATH="$dir" XMATUNE_LOG="${LOGTO:-}" XMATUNE_CACHE=off
        XMATUNE_VERBOSE=0)
    # Nothing from the caller's XMATUNE_*/SIMCUDA_* settings leaks in.
    local v
    for v in $(env | sed -n 's/^\(\(XMATUNE\|SIMCUDA\)_[A-Z_]*\)=.*/\1/p'); do e+=(-u "$v"); done
    local -a a=()
    case $name in *_a) a=(-a) ;; esac
    case $name in *b2*) a+=(-b 2) ;; *b128* | auto_own*) a+=(-b 128) ;; esac
    case $name in
    direct* | sdirect*) "${e[@]}" "$@" "${a[@]}" ;;
    off) "${e[@]}" LD_PRELOAD="$shim" XMATUNE_MODE=off "$@" ;;
    discover) "${e[@]}" LD_PRELOAD="$shim" XMATUNE_MODE=discover "$@" ;;
    pass*) "${e[@]}" LD_PRELOAD="$shim" XMATUNE_MODE=tune XMATUNE_POLICY="$here/policies/other_kernel.yaml" "$@" "${a[@]}" ;;
    hit*) "${e[@]}" LD_PRELOAD="$shim" XMATUNE_MODE=tune XMATUNE_WARMUP_MS=0 \
        XMATUNE_POLICY="$hitpol" "$@" "${a[@]}" ;;
    auto_passed) "${e[@]}" LD_PRELOAD="$shim" "${auto_env[@]}" XMATUNE_AUTO_MIN_US=1000000 "$@" "${a[@]}" ;;
    auto_*) "${e[@]}" LD_PRELOAD="$shim" "${auto_env[@]}" XMATUNE_AUTO_MIN_US=0 "$@" "${a[@]}" ;;
    esac
}

# auto_check NAME: one short run of NAME with a log; says on stderr what its key became and
# returns nonzero unless it is what NAME stands for (auto: a helper session, then:
# rewritten, own config kept, or passed through; a policy's hit: rewritten).
auto_check() {
    local name=$1 log="$work/check.$1.json"
    rm -f "$log"
    LOGTO=$log run "$name" "$bench" -n 1000 -t 1 -r 1 -w 10 >/dev/null 2>"$work/err" || {
        cat "$work/err" >&2
        return 1
    }
    python3 - "$log" "$name" <<'PY' >&2
import json, sys
log, name = sys.argv[1], sys.argv[2]
tune, summ = None, None
for line in open(log):
    ev = json.loads(line)
    if ev.get("event") == "tune" and ev.get("kernel") == "vecadd": tune = ev
    if ev.get("event") == "kernel_summary" and ev.get("kernel") == "vecadd": summ = ev
if name.startswith("hit") and summ:  # a policy's hit: tuned (simulated driver) or pinned (null)
    l, rw = summ["launches"], summ["rewritten"]
    print(f"bench_launch.sh: {name}: {l} launches, {rw} rewritten")
    sys.exit(0 if rw >= l - 1 else f"bench_launch.sh: {name}: its launches were not rewritten")
if not tune or not summ:
    sys.exit(f"bench_launch.sh: {name}: vecadd's key was not tuned (no tune event in {log})")
win = tune.get("winner") or {}
l, rw, pt = summ["launches"], summ["rewritten"], summ["passed_through"]
print(f"bench_launch.sh: {name}: key {tune['key']} tuned in the {tune.get('trial')}, "
      f"winner {win.get('config')}{' (its own)' if win.get('index') == -1 else ''}; {l} launches, {rw} rewritten, "
      f"{pt} passed through")
own = win.get("index") == -1  # the program's own config stayed
want = {"auto_hit": not own and rw == l - 1, "auto_hit_a": not own and rw == l - 1,
        "auto_own": own and rw == 0, "auto_own_a": own and rw == 0,
        "auto_passed": rw == 0 and pt == l}[name]
if tune.get("trial") != "helper" or not want:
    sys.exit(f"bench_launch.sh: {name}: not what it stands for")
PY
}
for n in "${names[@]}"; do
    case $n in auto_* | hit*) auto_check "$n" || exit 1 ;; esac
done

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
echo "\"added\" is against the row's own direct run (the same driver, dims and buffers: see the header"
echo "of tools/bench/bench_launch.sh); \"over pass-through\" less the pass-through's added (the issue-5 target)."
echo "The auto rows run on the simulated driver (tuning needs the trial helper and events), with XMATUNE_RECHECKS=0."
echo
echo "| configuration | Ir / launch | added Ir | over pass-through | ns / launch, 1 thread | added ns | ns / launch, 8 threads | added ns |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for n in "${names[@]}"; do
    b=${base[$n]}
    over=
    if [ -n "${passof[$n]:-}" ]; then
        p=${passof[$n]}
        over=$(diff_of "$(diff_of "${ir[$n]}" "${ir[$b]}")" "$(diff_of "${ir[$p]}" "${ir[${base[$p]}]}")")
    fi
    printf '| %s | %s | %s | %s | %.1f | %s | %.1f | %s |\n' "${label[$n]}" "${ir[$n]}" \
        "$(diff_of "${ir[$n]}" "${ir[$b]}")" "$over" "${ns1[$n]}" "$(diff_of "${ns1[$n]}" "${ns1[$b]}")" \
        "${ns8[$n]}" "$(diff_of "${ns8[$n]}" "${ns8[$b]}")"
done
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
    for n in "${names[@]}"; do
        case $n in direct* | sdirect*) continue ;; esac
        [ -e "$work/cg.$n.$N2" ] && [ -e "$work/cg.${base[$n]}.$N2" ] || continue
        perfn "${base[$n]}" >"$work/fn.direct"
        perfn "$n" >"$work/fn.$n"
        echo
        echo "Where the added instructions go, ${label[$n]}: self instructions per launch of each"
        echo "function, minus its direct run's (functions that differ by 0.5 or more; inlined code is"
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
