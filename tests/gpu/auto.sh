#!/usr/bin/env bash
# auto.sh -- tuning with no policy against tuning with the hand-written one (issue 28,
# item 7). Every tuning program of the GPU suite runs
#   base     without the shim                                   (output and TIME_MS)
#   hand     LD_PRELOAD=<shim> XMATUNE_MODE=tune XMATUNE_POLICY=<its policy>
#   auto     LD_PRELOAD=<shim> XMATUNE_AUTO=1                   (no policy at all)
#   autotol  (row_softmax and atomic_rowsum only) auto again with XMATUNE_AUTO_TOLERANCE
#            (1e-5 and 1e-4: their candidates differ from the own config by rounding)
# each shim run with XMATUNE_VERBOSE=1 and its own fresh XMATUNE_CACHE and XMATUNE_LOG
# (logs/<prog>.<run>.jsonl in the work folder). The CuPy programs run base, hand and auto,
# the Triton and PyTorch programs base and auto: for them the question is whether the
# outputs stay identical with every library kernel tuned.
# auto_table.py then prints one Markdown table: outputs identical (or within the tolerance
# allowed), the hand speed-up and the auto speed-up (from the tune events: the own
# config's median / the winner's, as run.sh reports it), auto / hand (target >= 0.9;
# a program whose own config is best must keep it), the winners' idioms (the tune
# events' "auto": {"idiom": ...}; "?" when absent).
#
#   bash tests/gpu/auto.sh [BUILD_DIR] [LIBXMATUNE]
#       BUILD_DIR   what tests/gpu/build.sh built   (default: <repo>/build-gpu)
#       LIBXMATUNE  the shim                        (default: <repo>/build/shim/libxmatune.so)
# Environment: PROGRAMS (the C programs, default below), PY_PROGRAMS (default
# "cupy_rawkernel cupy_longsize triton_kernel torch_ops"; "" for none), POLICY_DIR (the C
# programs' hand policies <prog>.yaml, default examples/gpu), PYTHON (python3),
# XMATUNE_GPU_TIMEOUT (per C run, 60 s), XMATUNE_GPU_PY_TIMEOUT (per Python run, 150 s),
# AUTO_BUDGET_S (no new run after this many seconds, default 270), XMATUNE_GPU_WORK
# (work folder; default a new one under /tmp), OUT (if set: auto.md and a tar of the
# logs are saved there). The caller's XMATUNE_* variables and LD_PRELOAD are cleared.
# Expected wall time on an H200: 2 to 4 minutes. Exit 0 when every row meets its target.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
build=$(abspath "${1:-$root/build-gpu}")
shim=$(abspath "${2:-$root/build/shim/libxmatune.so}")
PY=${PYTHON:-python3}
T_C=${XMATUNE_GPU_TIMEOUT:-60}
T_PY=${XMATUNE_GPU_PY_TIMEOUT:-150}
BUDGET=${AUTO_BUDGET_S:-270}
programs=${PROGRAMS:-saxpy transpose atomic_rowsum inplace_axpb fixed_block dyn_smem inplace_gs8 tied_pair row_softmax const_taps oob_blocks spin_grid}
py_programs=${PY_PROGRAMS-cupy_rawkernel cupy_longsize triton_kernel torch_ops}
poldir=$(abspath "${POLICY_DIR:-$root/examples/gpu}")
work=${XMATUNE_GPU_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/xmatune-auto.XXXXXX")}
mkdir -p "$work/logs" "$work/out" "$work/tmp"
work=$(cd "$work" && pwd)

unset LD_PRELOAD
for v in $(compgen -e | grep '^XMATUNE_' || true); do unset "$v"; done
[ -f "$shim" ] || { echo "auto.sh: no shim at $shim" >&2; exit 2; }
start=$(date +%s)

# The programs: name, kind (c|python), hand policy (- for none), how its auto run's output
# is compared with the run without the shim (exact: byte for byte, or f32tol:RTOL:ATOL),
# how the runs that allow a tolerance (hand; autotol) are compared, and the tolerance
# given to the autotol run (- for none).
{
    echo "# name	kind	policy	compare	compare_tol	auto_tolerance"
    for p in $programs; do
        case "$p" in
        atomic_rowsum) # float atomics: the result varies run to run, even without the shim
            printf '%s\tc\t%s\tf32tol:1e-4:1e-3\tf32tol:1e-4:1e-3\t1e-4,1e-3\n' "$p" "$poldir/$p.yaml" ;;
        row_softmax) # the block changes the rounding of its sums
            printf '%s\tc\t%s\texact\tf32tol:1e-5:1e-9\t1e-5,1e-9\n' "$p" "$poldir/$p.yaml" ;;
        *) printf '%s\tc\t%s\texact\texact\t-\n' "$p" "$poldir/$p.yaml" ;;
        esac
    done
    for p in $py_programs; do
        pol=-
        [ -f "$here/$p.yaml" ] && pol=$here/$p.yaml
        printf '%s\tpython\t%s\texact\texact\t-\n' "$p" "$pol"
    done
} >"$work/programs.tsv"
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
    echo "command: bash tests/gpu/auto.sh $*"
    echo "git: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" status --porcelain 2>/dev/null | grep -q . && echo ' (with uncommitted changes)')"
} >"$work/env.txt"

# run NAME KIND RUN [VAR=VALUE...]: one run of one program, as run.sh lays it out:
# logs/NAME.RUN.{stdout,stderr,rc,limit,note}, out/NAME.RUN.bin.
run() {
    local name=$1 kind=$2 mode=$3
    shift 3
    local base="$work/logs/$name.$mode" t=$T_C cmd=()
    rm -f "$base".* "$work/out/$name.$mode.bin"
    if [ $(($(date +%s) - start)) -gt "$BUDGET" ]; then
        echo "not run: time budget (${BUDGET} s) spent" >"$base.note"
        echo "auto.sh: $name/$mode: not run (budget)" >&2
        return
    fi
    if [ "$kind" = python ]; then
        t=$T_PY
        cmd=("$PY" "$here/$name.py")
        set -- "$@" "TRITON_CACHE_DIR=$work/tmp/triton.$name.$mode" "CUPY_CACHE_DIR=$work/tmp/cupy.$name.$mode"
    else
        if [ ! -x "$build/bin/$name" ]; then
            echo "not built (no $build/bin/$name)" >"$base.note"
            echo "auto.sh: $name/$mode: not built" >&2
            return
        fi
        cmd=("$build/bin/$name")
    fi
    local t0 t1
    t0=$(date +%s.%N)
    (cd "$work/tmp" && timeout -k 10 "$t" env "$@" "${cmd[@]}" "$work/out/$name.$mode.bin" \
        >"$base.stdout" 2>"$base.stderr" </dev/null)
    echo $? >"$base.rc"
    echo "$t" >"$base.limit"
    t1=$(date +%s.%N)
    printf 'auto.sh: %-15s %-7s rc=%-3s %5.1f s\n' "$name" "$mode" "$(cat "$base.rc")" \
        "$(awk "BEGIN{print $t1 - $t0}")" >&2
}

# shim_env NAME RUN: the settings every shim run shares (its own log and fresh cache).
shim_env() {
    echo "LD_PRELOAD=$shim"
    echo "XMATUNE_VERBOSE=1"
    echo "XMATUNE_LOG=$work/logs/$1.$2.jsonl"
    echo "XMATUNE_CACHE=$work/logs/$1.$2.cache.jsonl"
}

while IFS=$'\t' read -r name kind policy _cmp _cmptol tol; do
    case "$name" in '#'* | '') continue ;; esac
    run "$name" "$kind" base
    if [ "$(cat "$work/logs/$name.base.rc" 2>/dev/null)" = 77 ]; then continue; fi # SKIP: no module, no device
    mapfile -t envs < <(shim_env "$name" hand)
    if [ "$policy" != - ]; then
        run "$name" "$kind" hand "${envs[@]}" XMATUNE_MODE=tune "XMATUNE_POLICY=$policy"
    fi
    mapfile -t envs < <(shim_env "$name" auto)
    run "$name" "$kind" auto "${envs[@]}" XMATUNE_AUTO=1
    if [ "$tol" != - ]; then
        mapfile -t envs < <(shim_env "$name" autotol)
        run "$name" "$kind" autotol "${envs[@]}" XMATUNE_AUTO=1 "XMATUNE_AUTO_TOLERANCE=$tol"
    fi
done <"$work/programs.tsv"

# shellcheck source=tests/gpu/report.sh
. "$here/report.sh"
report_and_exit auto
