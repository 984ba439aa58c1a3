#!/usr/bin/env bash
# racing.sh -- what tuning costs against its floor, per tuning key (issue 26, item 1's
# target), and the choice quality of the winners.
#   1. every tuning program (below) without the shim once (its output), then ROUNDS rounds
#      of each in tune mode with its hand policy, each run a fresh process with its own
#      fresh XMATUNE_CACHE and XMATUNE_LOG (logs/<prog>.r<N>.jsonl in the work folder);
#   2. unless QUALITY=0: tools/bench/choice_quality.py --no-triton (its independent
#      harness times every config of 16 keys apart; quality = best / xmatune's winner),
#      then BUILD/bin/timing_ways 22 160 when built (tools/bench/cq/timing_ways.cu: the
#      in-place key the tuner and the harness disagree on, timed six ways; a few seconds).
# racing_table.py prints, per key (medians over the rounds): the tune event's duration_ms
# less its phases_ms.clock_warmup and phases_ms.module_load (*tuning*), its floor_ms and
# full_floor_ms (what timing every verified candidate in full would have cost: its warm-up
# and timed runs times its median; estimated from the candidates' medians and the event's
# warmup and iterations when the event has no full_floor_ms, marked "est."), and tuning
# against 0.5 x full_floor_ms + 20 ms; then the median and the maximum over keys of
# (tuning - 20 ms) / full_floor_ms (targets: median <= 0.5, max <= 1.0), the candidates by
# status (eliminated ones included), whether the rounds chose one winner, outputs against
# the run without the shim, and choice quality (targets: median >= 0.99, none < 0.95);
# where nvidia-smi is there, the GPU's SM clock around each program's slowest round; and
# each program's slowest and fastest round split by the helper's driver calls (driver_calls).
#
#   bash tests/gpu/racing.sh [BUILD_DIR] [LIBXMATUNE]
# Environment: PROGRAMS (default: saxpy transpose atomic_rowsum inplace_axpb fixed_block
# dyn_smem inplace_gs8 tied_pair row_softmax const_taps), ROUNDS (default 3), QUALITY (1: run
# choice_quality.py, the default; 0: not), QUALITY_BUDGET_S (its --budget-s, default 80),
# POLICY_DIR (the hand policies <prog>.yaml, default examples/gpu),
# PYTHON, XMATUNE_GPU_TIMEOUT (per run, 60 s), RACING_BUDGET_S (no new tune run after
# this many seconds, default 100), XMATUNE_GPU_WORK (work folder; default a new one under
# /tmp), OUT (if set: racing.md and a tar of the logs are saved there), IDLE_S (seconds
# the GPU is left idle before each tune run, default 0: with it, every round starts as
# fixed_block's slow one did, on a GPU whose clock may have dropped), CLOCK_MS (the SM
# clock's sampling interval, default 50; a session of 10 to 30 ms wants 20). Expected wall
# time on an H200: about 1 minute, plus 1 to 2 for the choice quality. Exit 0 when every
# target holds.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
build=$(abspath "${1:-$root/build-gpu}")
shim=$(abspath "${2:-$root/build/shim/libxmatune.so}")
PY=${PYTHON:-python3}
T=${XMATUNE_GPU_TIMEOUT:-60}
BUDGET=${RACING_BUDGET_S:-100}
rounds=${ROUNDS:-3}
programs=${PROGRAMS:-saxpy transpose atomic_rowsum inplace_axpb fixed_block dyn_smem inplace_gs8 tied_pair row_softmax const_taps}
poldir=$(abspath "${POLICY_DIR:-$root/examples/gpu}")
work=${XMATUNE_GPU_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/xmatune-racing.XXXXXX")}
mkdir -p "$work/logs" "$work/out" "$work/tmp"
work=$(cd "$work" && pwd)

unset LD_PRELOAD
for v in $(compgen -e | grep '^XMATUNE_' || true); do unset "$v"; done
[ -f "$shim" ] || { echo "racing.sh: no shim at $shim" >&2; exit 2; }
start=$(date +%s)

{
    echo "# name	compare	rounds"
    for p in $programs; do
        case "$p" in
        atomic_rowsum) cmpm=f32tol:1e-4:1e-3 ;; # float atomics
        row_softmax) cmpm=f32tol:1e-5:1e-9 ;;   # its policy accepts rounding
        *) cmpm=exact ;;
        esac
        printf '%s\t%s\t%s\n' "$p" "$cmpm" "$rounds"
    done
} >"$work/programs.tsv"
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
    echo "command: bash tests/gpu/racing.sh $*"
    echo "settings: ROUNDS=$rounds IDLE_S=${IDLE_S:-0} CLOCK_MS=${CLOCK_MS:-50} RACING_BUDGET_S=$BUDGET QUALITY=${QUALITY:-1}"
    echo "git: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" status --porcelain 2>/dev/null | grep -q . && echo ' (with uncommitted changes)')"
} >"$work/env.txt"

# The GPU's SM clock every 50 ms (clocks.csv) while the programs run, and each process's
# start and end (timeline.tsv): racing_table.py prints the clock around each key's slowest
# round. A key whose candidates are all rejected never runs the clock warm-up, so all its
# work runs at the clock the GPU happens to be at, and its bound is 20 ms alone.
clock_pid=
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=timestamp,clocks.sm --format=csv,noheader,nounits -lms "${CLOCK_MS:-50}" \
        >"$work/clocks.csv" 2>/dev/null &
    clock_pid=$!
fi
stop_clock() {
    [ -n "$clock_pid" ] && kill "$clock_pid" 2>/dev/null
    clock_pid=
}
trap stop_clock EXIT
: >"$work/timeline.tsv"

# run NAME RUN [VAR=VALUE...]: one process, laid out as run.sh does it.
run() {
    local name=$1 mode=$2 t0
    shift 2
    local base="$work/logs/$name.$mode"
    rm -f "$base".* "$work/out/$name.$mode.bin"
    if [ ! -x "$build/bin/$name" ]; then
        echo "not built (no $build/bin/$name)" >"$base.note"
        return
    fi
    t0=$(date +%s.%N)
    (cd "$work/tmp" && timeout -k 10 "$T" env "$@" "$build/bin/$name" "$work/out/$name.$mode.bin" \
        >"$base.stdout" 2>"$base.stderr" </dev/null)
    echo $? >"$base.rc"
    printf '%s\t%s\t%s\t%s\n' "$name" "$mode" "$t0" "$(date +%s.%N)" >>"$work/timeline.tsv"
    echo "$T" >"$base.limit"
    echo "racing.sh: $name $mode rc=$(cat "$base.rc") ($(($(date +%s) - start)) s)" >&2
}

for p in $programs; do run "$p" base; done
for ((i = 1; i <= rounds; i++)); do
    for p in $programs; do
        if [ $(($(date +%s) - start)) -gt "$BUDGET" ]; then
            echo "not run: time budget (${BUDGET} s) spent" >"$work/logs/$p.r$i.note"
            continue
        fi
        [ "${IDLE_S:-0}" != 0 ] && sleep "$IDLE_S"
        run "$p" "r$i" "LD_PRELOAD=$shim" XMATUNE_MODE=tune "XMATUNE_POLICY=$poldir/$p.yaml" \
            "XMATUNE_LOG=$work/logs/$p.r$i.jsonl" "XMATUNE_CACHE=$work/logs/$p.r$i.cache.jsonl"
    done
done
stop_clock

if [ "${QUALITY:-1}" != 0 ]; then
    mkdir -p "$work/quality"
    cubin=$build/gen/cq_kernels.cubin
    if [ ! -f "$cubin" ]; then
        echo "not run: no $cubin (bash tests/gpu/build.sh)" >"$work/quality/note"
    else
        echo "racing.sh: choice quality (tools/bench/choice_quality.py --no-triton)" >&2
        timeout -k 10 $((${QUALITY_BUDGET_S:-80} + 120)) "$PY" "$root/tools/bench/choice_quality.py" \
            --cubin "$cubin" --shim "$shim" --no-triton --budget-s "${QUALITY_BUDGET_S:-80}" \
            --out "$work/quality" >"$work/quality/stdout" 2>"$work/quality/stderr" </dev/null
        echo $? >"$work/quality/rc"
    fi
    # the lowest key's configs timed six ways in one program (tools/bench/cq/timing_ways.cu):
    # which way of timing changes their order (docs/benchmarks.md)
    if [ -x "$build/bin/timing_ways" ]; then
        timeout -k 5 60 "$build/bin/timing_ways" 22 160 >"$work/quality/timing_ways.md" 2>&1 </dev/null
    fi
fi

# shellcheck source=tests/gpu/report.sh
. "$here/report.sh"
report_and_exit racing
