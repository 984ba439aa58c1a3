#!/usr/bin/env bash
# run.sh -- runs the GPU suite on a machine with a GPU and prints its tables.
#
#   bash tests/gpu/run.sh [BUILD_DIR] [LIBXMATUNE]
#       BUILD_DIR   what tests/gpu/build.sh built   (default: <repo>/build-gpu)
#       LIBXMATUNE  the shim                        (default: <repo>/build/shim/libxmatune.so)
#
# Every program runs
#   1. without the shim                              -> out/<prog>.base.bin
#   2. with LD_PRELOAD=<shim> XMATUNE_MODE=discover XMATUNE_LOG=logs/<prog>.disc.jsonl
#   3. (tuning programs, examples/gpu) with XMATUNE_MODE=tune
#      XMATUNE_POLICY=examples/gpu/<prog>.yaml XMATUNE_LOG=logs/<prog>.tune.jsonl
#      XMATUNE_CACHE=logs/<prog>.cache.jsonl
#   4. (tuning programs) again with XMATUNE_MODE=replay and that cache: no benchmark
#   5. (graph programs: saxpy's kernel in explicit and captured graphs) XMATUNE_MODE=replay
#      with saxpy's cache and XMATUNE_CACHE_VERIFY=0 (a graph node cannot be verified:
#      nothing may run at node-add or capture time), and again with the default (the
#      winner, not verified in that process, is not used: replays keep the program's config)
#   6. (trial programs, examples/gpu: candidates that fault or hang, __constant__ memory the
#      program set) instead of 3 and 4: XMATUNE_MODE=tune with the default settings (trials
#      in the helper process) and again with XMATUNE_TRIALS=inline (the "before" row:
#      oob_blocks is expected to die, spin_grid to hang until its short timeout), both with
#      XMATUNE_CACHE=off, so that each run tunes from nothing
# and summarize.py compares outputs with the first run (byte for byte; atomic_rowsum and
# row_softmax within a tolerance, marked so) and prints its Markdown tables (README.md: The report).
#
# Robust by design: each run has a timeout; a crash, a timeout, a missing binary or a
# missing Python module is a row saying so, never the end of the script; the whole suite
# stops starting new runs after XMATUNE_GPU_BUDGET_S seconds (default 240).
#
# Environment: PYTHON (default python3), XMATUNE_GPU_TIMEOUT (per C program run, 60 s),
# XMATUNE_GPU_PY_TIMEOUT (per Python run, 150 s), XMATUNE_GPU_INLINE_TIMEOUT (per trial
# program's inline run, 20 s), XMATUNE_GPU_TRIAL_TIMEOUT_MS (if set: XMATUNE_TRIAL_TIMEOUT_MS
# for the trial programs' tune runs; otherwise the shim's default), XMATUNE_GPU_WORK (work
# folder; default a new one under /tmp), XMATUNE_GPU_PROGRAMS (if set: only the programs it
# names, space-separated), OUT (if set: the table and one tar of all logs are
# saved there).
# XMATUNE_* variables of the caller are cleared; LD_PRELOAD too.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
build=$(abspath "${1:-$root/build-gpu}")
shim=$(abspath "${2:-$root/build/shim/libxmatune.so}")
PY=${PYTHON:-python3}
T_C=${XMATUNE_GPU_TIMEOUT:-60}
T_PY=${XMATUNE_GPU_PY_TIMEOUT:-150}
T_INLINE=${XMATUNE_GPU_INLINE_TIMEOUT:-20}
TRIAL_MS=${XMATUNE_GPU_TRIAL_TIMEOUT_MS:-}
BUDGET=${XMATUNE_GPU_BUDGET_S:-240}
ONLY=${XMATUNE_GPU_PROGRAMS:-}
work=${XMATUNE_GPU_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/xmatune-gpu.XXXXXX")}
mkdir -p "$work/logs" "$work/out" "$work/tmp"
work=$(cd "$work" && pwd)

unset LD_PRELOAD
for v in $(compgen -e | grep '^XMATUNE_' || true); do unset "$v"; done
start=$(date +%s)

# ---------------------------------------------------------------- the programs
# name <TAB> kind (suite|python|tune|graph|trial) <TAB> comparison (exact|f32tol:RTOL:ATOL)
# <TAB> policy <TAB> expected (trial programs: what the inline run does, dies|hangs|ok, and
# whether the default run must log candidates with status fault, fault|nofault)
{
    echo "# name	kind	compare	policy	expect"
    for p in rt_kernels ptds launch_ex launch_paths driver_api threads graph; do
        printf '%s\tsuite\texact\t\n' "$p"
    done
    for p in torch_ops triton_kernel cupy_rawkernel cupy_longsize; do
        printf '%s\tpython\texact\t\n' "$p"
    done
    for p in saxpy transpose atomic_rowsum inplace_axpb fixed_block dyn_smem inplace_gs8 tied_pair row_softmax; do
        cmpm=exact
        [ "$p" = atomic_rowsum ] && cmpm=f32tol:1e-4:1e-3 # float atomics: vary run to run
        [ "$p" = row_softmax ] && cmpm=f32tol:1e-5:1e-9   # its policy allows rounding (the block)
        printf '%s\ttune\t%s\t%s\n' "$p" "$cmpm" "$root/examples/gpu/$p.yaml"
    done
    # saxpy.cu's kernel in graphs, replayed from the cache saxpy's tune run wrote
    for p in graph_explicit graph_captured; do
        printf '%s\tgraph\texact\t%s\n' "$p" "$root/examples/gpu/saxpy.yaml"
    done
    # last: spin_grid's inline run hangs until its timeout (XMATUNE_GPU_INLINE_TIMEOUT)
    for p in oob_blocks:dies,fault const_taps:ok,nofault spin_grid:hangs,fault; do
        printf '%s\ttrial\texact\t%s\t%s\n' "${p%%:*}" "$root/examples/gpu/${p%%:*}.yaml" "${p#*:}"
    done
} >"$work/programs.tsv"
# XMATUNE_GPU_PROGRAMS: only these programs (names, space-separated), for a call with little
# device time left; the report then has their rows alone
if [ -n "$ONLY" ]; then
    awk -F'\t' -v keep=" $ONLY " '/^#/ || index(keep, " " $1 " ")' \
        "$work/programs.tsv" >"$work/programs.kept" && mv "$work/programs.kept" "$work/programs.tsv"
fi

# ------------------------------------------------------------ the environment
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    if command -v nvidia-smi >/dev/null 2>&1; then
        echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1 |
            sed 's/, / driver /; s/, / memory /')"
    else
        echo "GPU: (nvidia-smi not found)"
    fi
    echo "host: $(uname -srm), glibc $(ldd --version 2>/dev/null | head -1 | awk '{print $NF}')"
    echo "python: $($PY -c 'import sys; print(sys.version.split()[0])' 2>/dev/null || echo none)"
    echo "shim: $shim$([ -f "$shim" ] || echo ' (MISSING)')"
    echo "build: $build"
    echo "command: bash tests/gpu/run.sh $*"
    echo "git: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" status --porcelain 2>/dev/null | grep -q . && echo ' (with uncommitted changes)')"
} >"$work/env.txt"
cat "$work/env.txt" >&2

# run_one NAME MODE TIMEOUT [VAR=VALUE...] -- COMMAND...
# Runs COMMAND with the output file as its last argument; records rc, stdout, stderr.
run_one() {
    local name=$1 mode=$2 t=$3
    shift 3
    local envs=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
        envs+=("$1")
        shift
    done
    shift
    local base="$work/logs/$name.$mode"
    rm -f "$base".* "$work/out/$name.$mode.bin"
    if [ $(($(date +%s) - start)) -gt "$BUDGET" ]; then
        echo "not run: suite time budget (${BUDGET} s) spent" >"$base.note"
        echo "run.sh: $name/$mode: not run (budget)" >&2
        return
    fi
    local t0 t1
    t0=$(date +%s.%N)
    (cd "$work/tmp" && timeout -k 10 "$t" env "${envs[@]}" "$@" "$work/out/$name.$mode.bin" \
        >"$base.stdout" 2>"$base.stderr" </dev/null)
    echo $? >"$base.rc"
    echo "$t" >"$base.limit"
    t1=$(date +%s.%N)
    printf 'run.sh: %-16s %-6s rc=%-3s %5.1f s  %s\n' "$name" "$mode" "$(cat "$base.rc")" \
        "$(awk "BEGIN{print $t1 - $t0}")" "$(grep -m1 '^LAUNCHES' "$base.stdout")" >&2
}

# run_prog NAME KIND MODE [VAR=VALUE...]: the command line for one program.
run_prog() {
    local name=$1 kind=$2 mode=$3
    shift 3
    local t=${RUN_T:-$T_C} cmd=() # RUN_T: a caller's shorter timeout
    if [ "$kind" = python ]; then
        t=$T_PY
        if ! command -v "$PY" >/dev/null 2>&1; then
            rm -f "$work/logs/$name.$mode".*
            echo "skipped: no $PY" >"$work/logs/$name.$mode.note"
            return
        fi
        cmd=("$PY" "$here/$name.py")
        # A fresh Triton cache per run, so that Triton compiles (and runs gcc) every time,
        # also under LD_PRELOAD; likewise CuPy's kernel cache.
        set -- "$@" "TRITON_CACHE_DIR=$work/tmp/triton.$name.$mode" "CUPY_CACHE_DIR=$work/tmp/cupy.$name.$mode"
    else
        if [ ! -x "$build/bin/$name" ]; then
            rm -f "$work/logs/$name.$mode".*
            echo "not built (no $build/bin/$name)" >"$work/logs/$name.$mode.note"
            echo "run.sh: $name/$mode: not built" >&2
            return
        fi
        cmd=("$build/bin/$name")
    fi
    run_one "$name" "$mode" "$t" "$@" -- "${cmd[@]}"
}

have_shim=1
[ -f "$shim" ] || have_shim=0
[ $have_shim = 1 ] || echo "run.sh: WARNING: no shim at $shim: only the runs without it happen" >&2

while IFS=$'\t' read -r name kind cmpm policy _expect; do
    case "$name" in '#'* | '') continue ;; esac
    run_prog "$name" "$kind" base
    if [ $have_shim = 1 ]; then
        run_prog "$name" "$kind" disc "LD_PRELOAD=$shim" XMATUNE_MODE=discover \
            "XMATUNE_LOG=$work/logs/$name.disc.jsonl"
    else
        echo "not run: no shim at $shim" >"$work/logs/$name.disc.note"
    fi
    if [ "$kind" = tune ]; then
        if [ $have_shim = 0 ]; then
            echo "not run: no shim at $shim" >"$work/logs/$name.tune.note"
        elif [ ! -f "$policy" ]; then
            echo "not run: no policy $policy" >"$work/logs/$name.tune.note"
        else
            run_prog "$name" "$kind" tune "LD_PRELOAD=$shim" XMATUNE_MODE=tune "XMATUNE_POLICY=$policy" \
                "XMATUNE_LOG=$work/logs/$name.tune.jsonl" XMATUNE_VERBOSE=1 \
                "XMATUNE_CACHE=$work/logs/$name.cache.jsonl"
            # A second process: the winners come from the on-disk cache, nothing is timed.
            run_prog "$name" "$kind" replay "LD_PRELOAD=$shim" XMATUNE_MODE=replay \
                "XMATUNE_POLICY=$policy" "XMATUNE_LOG=$work/logs/$name.replay.jsonl" \
                "XMATUNE_CACHE=$work/logs/$name.cache.jsonl"
        fi
    fi
    if [ "$kind" = trial ]; then
        if [ $have_shim = 0 ]; then
            echo "not run: no shim at $shim" >"$work/logs/$name.tune.note"
            echo "not run: no shim at $shim" >"$work/logs/$name.inline.note"
        elif [ ! -f "$policy" ]; then
            echo "not run: no policy $policy" >"$work/logs/$name.tune.note"
            echo "not run: no policy $policy" >"$work/logs/$name.inline.note"
        else
            trial_ms=()
            [ -n "$TRIAL_MS" ] && trial_ms=("XMATUNE_TRIAL_TIMEOUT_MS=$TRIAL_MS")
            # The default settings: candidates run in the trial helper.
            run_prog "$name" "$kind" tune "LD_PRELOAD=$shim" XMATUNE_MODE=tune "XMATUNE_POLICY=$policy" \
                "XMATUNE_LOG=$work/logs/$name.tune.jsonl" XMATUNE_VERBOSE=1 XMATUNE_CACHE=off \
                "${trial_ms[@]}"
            # Before: candidates in the program's own process; a hang ends at T_INLINE.
            RUN_T=$T_INLINE run_prog "$name" "$kind" inline "LD_PRELOAD=$shim" XMATUNE_MODE=tune \
                "XMATUNE_POLICY=$policy" "XMATUNE_LOG=$work/logs/$name.inline.jsonl" XMATUNE_VERBOSE=1 \
                XMATUNE_CACHE=off XMATUNE_TRIALS=inline
        fi
    fi
    if [ "$kind" = graph ] && [ $have_shim = 1 ]; then
        cache="$work/logs/saxpy.cache.jsonl"
        if [ ! -s "$cache" ]; then
            echo "not run: no cache from saxpy's tune run ($cache)" >"$work/logs/$name.replay.note"
        else
            run_prog "$name" "$kind" replay "LD_PRELOAD=$shim" XMATUNE_MODE=replay \
                "XMATUNE_POLICY=$policy" "XMATUNE_LOG=$work/logs/$name.replay.jsonl" \
                "XMATUNE_CACHE=$cache" XMATUNE_CACHE_VERIFY=0
            run_prog "$name" "$kind" replayv "LD_PRELOAD=$shim" XMATUNE_MODE=replay \
                "XMATUNE_POLICY=$policy" "XMATUNE_LOG=$work/logs/$name.replayv.jsonl" \
                "XMATUNE_CACHE=$cache"
        fi
    fi
done <"$work/programs.tsv"

# ------------------------------------------------------------------ the report
table="$work/gpu-suite.md"
if ! "$PY" "$here/summarize.py" report "$work" >"$table" 2>"$work/summarize.stderr"; then
    {
        echo "# xmatune GPU suite: summarize.py failed, raw results"
        echo
        cat "$work/summarize.stderr"
        echo
        for f in "$work"/logs/*.rc; do echo "$(basename "$f" .rc): rc $(cat "$f")"; done
    } >"$table"
fi
# Per-log summaries, for whoever reads the tar.
"$PY" "$here/summarize.py" log "$work"/logs/*.jsonl >"$work/logs-summary.txt" 2>&1 || true

echo
cat "$table"
echo
echo "run.sh: $(($(date +%s) - start)) s; work folder: $work" >&2

if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    cp "$table" "$OUT/gpu-suite.md"
    cp "$work/logs-summary.txt" "$OUT/logs-summary.txt" 2>/dev/null || true
    # One tar for everything else (logs, stdout/stderr, env); outputs only if small.
    (cd "$work" && tar czf "$OUT/gpu-suite-logs.tar.gz" --exclude='./out' --exclude='./tmp' .) ||
        echo "run.sh: could not write $OUT/gpu-suite-logs.tar.gz" >&2
    echo "run.sh: saved $OUT/gpu-suite.md, $OUT/logs-summary.txt, $OUT/gpu-suite-logs.tar.gz" >&2
fi
exit 0
