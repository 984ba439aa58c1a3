#!/usr/bin/env bash
# stub_tune.sh -- issue 12's done-when, in one call: the GPU suite's tuning programs tune
# from skeletons written by `xmatune discover --stub`, with no edits beyond filling in
# what their comments name.
#
#   bash tests/gpu/stub_tune.sh [BUILD_DIR] [LIBXMATUNE]      on the GPU machine
#       BUILD_DIR   what tests/gpu/build.sh built   (default: <repo>/build-gpu)
#       LIBXMATUNE  the shim                        (default: <repo>/build/shim/libxmatune.so;
#                   the xmatune command is taken from beside it: <its build>/tools/xmatune)
#   bash tests/gpu/stub_tune.sh --sim [BUILD]                 on a CPU: the simulated driver
#       (BUILD: the CPU build, default <repo>/build), with programs of its own kernels
#
# For each program (the tuning programs of tests/gpu/run.sh, with their hand-written
# policies examples/gpu/<prog>.yaml):
#   1. base   the program without the shim                       -> out/<prog>.base.bin
#   2. disc   xmatune discover --log logs/<prog>.disc.jsonl --stub stubs/<prog>.stub.yaml
#   3. fill   stub_fill.py fill <prog>: only what the skeleton's comments name (keep the
#             program's kernel, choose an offered idiom, triggers, a float-atomic output's
#             tolerance and shape, the argument the grid follows); the edits of each
#             program are listed in stub_fill.py                 -> stubs/<prog>.yaml
#   4. check  xmatune check -q on it, and check --log on the discover log (logs/*.check.txt)
#   5. stub   tuned with it (XMATUNE_MODE=tune, no cache)        -> out/<prog>.stub.bin
#   6. hand   tuned with the hand-written policy                 -> out/<prog>.hand.bin
# then prints one Markdown table (stub_fill.py table): the idiom the skeleton chose, what
# was filled in, the stub's candidates, its winner and median against the hand-written
# policy's winner and median, whether the stub's winner is in the hand-written space (and
# its median there), and the outputs of both tuned runs against the run without the shim
# (byte for byte; atomic_rowsum within rtol 1e-4, atol 1e-3, marked †).
# Exit status: 0 when every row is ok, 1 otherwise, 2 on usage errors.
#
# Each run has a timeout (XMATUNE_GPU_TIMEOUT, default 60 s); no new run starts after
# XMATUNE_GPU_BUDGET_S (default 150 s). XMATUNE_GPU_WORK: the work folder (default a new
# one under /tmp); OUT: if set, the table and a tar of the work folder are saved there.
# Expected wall time on an H200: about 30 to 60 s.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
PY=${PYTHON:-python3}
sim=0
if [ "${1:-}" = "--sim" ]; then
    sim=1
    shift
    cpu=$(abspath "${1:-$root/build}")
    shim=$cpu/shim/libxmatune.so
    tool=$cpu/tools/xmatune
    app=$cpu/tests/integration/app_rt
    [ -x "$app" ] || { echo "stub_tune.sh: no $app (build the CPU tree first)" >&2; exit 2; }
else
    build=$(abspath "${1:-$root/build-gpu}")
    shim=$(abspath "${2:-$root/build/shim/libxmatune.so}")
    tool=$(dirname "$shim")/../tools/xmatune
fi
[ -f "$shim" ] || { echo "stub_tune.sh: no shim at $shim" >&2; exit 2; }
[ -x "$tool" ] || { echo "stub_tune.sh: no xmatune command at $tool" >&2; exit 2; }
T=${XMATUNE_GPU_TIMEOUT:-60}
BUDGET=${XMATUNE_GPU_BUDGET_S:-150}
work=${XMATUNE_GPU_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/xmatune-stub.XXXXXX")}
mkdir -p "$work/logs" "$work/out" "$work/stubs" "$work/tmp"
work=$(cd "$work" && pwd)

# The caller's LD_PRELOAD is cleared. A sanitized shim needs its sanitizer runtime first
# (LD_PRELOAD=libasan.so:libxmatune.so): XMT_PRELOAD_PREFIX="RUNTIME:" (what the sanitized
# suite sets, scripts/sanitize.sh), or a runtime first in LD_PRELOAD, is kept for every
# run of the shim (and only there: bash itself cannot run under TSan's).
san=${XMT_PRELOAD_PREFIX:-}
san=${san%:}
if [ -z "$san" ]; then
    san=${LD_PRELOAD:-}
    san=${san%%:*}
    case "${san##*/}" in libasan.so* | libtsan.so* | libclang_rt.*) ;; *) san= ;; esac
fi
unset LD_PRELOAD
pre=${san:+$san:}$shim
for v in $(compgen -e | grep '^XMATUNE_' || true); do unset "$v"; done
export XMATUNE_SHIM=$shim # the xmatune command preloads this one
extra_env=()
if [ $sim = 1 ]; then
    export LD_LIBRARY_PATH=$cpu/simdriver${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    extra_env=(XMATUNE_WARMUP_MS=0) # the simulated GPU has no clock to raise
fi
start=$(date +%s)

# ---------------------------------------------------------------- the programs
# name <TAB> kernel (a part of its name) <TAB> comparison <TAB> hand-written policy (-:
# none) <TAB> command (@OUT@: the output file)
{
    echo "# name	kernel	compare	policy	command"
    if [ $sim = 0 ]; then
        for p in saxpy transpose atomic_rowsum inplace_axpb fixed_block dyn_smem; do
            case $p in
            saxpy) k=saxpy ;; transpose) k=transpose_naive ;; atomic_rowsum) k=row_sum_atomic ;;
            inplace_axpb) k=axpb_inplace ;; fixed_block) k=smooth_tile256 ;; dyn_smem) k=stencil17_dyn ;;
            esac
            cmpm=exact
            [ $p = atomic_rowsum ] && cmpm=f32tol:1e-4:1e-3
            printf '%s\t%s\t%s\t%s\t%s\n' "$p" "$k" "$cmpm" "$root/examples/gpu/$p.yaml" "$build/bin/$p @OUT@"
        done
    else
        pol=$root/tests/integration/policies
        printf 'sim_saxpy\tsaxpy\texact\t%s\t%s saxpy @OUT@ 3\n' "$pol/saxpy.yaml" "$app"
        for k in scale2d block_sum atomic_sum smem_rev vecadd; do
            cmpm=exact
            [ $k = atomic_sum ] && cmpm=f32tol:1e-4:1e-3
            hand=$pol/$k.yaml
            [ -f "$hand" ] || hand=- # none (a field may not be empty: read would skip it)
            printf 'sim_%s\t%s\t%s\t%s\t%s basic @OUT@ 3\n' "$k" "$k" "$cmpm" "$hand" "$app"
        done
    fi
} >"$work/programs.tsv"

# step PROG STEP COMMAND...: runs one step with a timeout (not after the budget), its
# stdout and stderr in logs/PROG.STEP.{stdout,stderr}, its exit status in logs/PROG.STEP.rc.
step() {
    local prog=$1 name=$2
    shift 2
    local base=$work/logs/$prog.$name
    if [ $(($(date +%s) - start)) -gt "$BUDGET" ]; then
        echo "not run: time budget (${BUDGET} s) spent" >"$base.note"
        echo 124 >"$base.rc"
        return 1
    fi
    local t0 t1
    t0=$(date +%s.%N)
    (cd "$work/tmp" && timeout -k 10 "$T" "$@" >"$base.stdout" 2>"$base.stderr" </dev/null)
    local rc=$?
    echo $rc >"$base.rc"
    t1=$(date +%s.%N)
    printf 'stub_tune.sh: %-16s %-5s rc=%-3s %5.1f s\n' "$prog" "$name" "$rc" \
        "$(awk "BEGIN{print $t1 - $t0}")" >&2
    return $rc
}

while IFS=$'\t' read -r prog kernel cmpm hand cmdline; do
    case "$prog" in '#'* | '') continue ;; esac
    rm -f "$work"/logs/"$prog".* "$work"/out/"$prog".* "$work"/stubs/"$prog".*
    cmd() { # the program's command for output file $1
        local w out=()
        for w in $cmdline; do out+=("${w/@OUT@/$1}"); done
        printf '%s\n' "${out[@]}"
    }
    mapfile -t c_base < <(cmd "$work/out/$prog.base.bin")
    mapfile -t c_disc < <(cmd "$work/out/$prog.disc.bin")
    mapfile -t c_stub < <(cmd "$work/out/$prog.stub.bin")
    mapfile -t c_hand < <(cmd "$work/out/$prog.hand.bin")
    if [ ! -x "${c_base[0]}" ]; then
        echo "not built: ${c_base[0]}" >"$work/logs/$prog.base.note"
        echo 127 >"$work/logs/$prog.base.rc"
        echo "stub_tune.sh: $prog: not built (${c_base[0]})" >&2
        continue
    fi
    step "$prog" base env "${extra_env[@]}" "${c_base[@]}" || continue
    step "$prog" disc env "${extra_env[@]}" ${san:+"LD_PRELOAD=$san"} "$tool" discover --log "$work/logs/$prog.disc.jsonl" \
        --stub "$work/stubs/$prog.stub.yaml" -- "${c_disc[@]}" || continue
    step "$prog" fill "$PY" "$here/stub_fill.py" fill "$prog" "$work/stubs/$prog.stub.yaml" \
        "$work/stubs/$prog.yaml" || continue
    cp "$work/logs/$prog.fill.stdout" "$work/logs/$prog.fill.txt"
    step "$prog" check "$tool" check -q "$work/stubs/$prog.yaml" || continue
    "$tool" check --log "$work/logs/$prog.disc.jsonl" "$work/stubs/$prog.yaml" \
        >"$work/logs/$prog.check.txt" 2>&1
    # XMATUNE_CACHE=off: each run tunes afresh (a cache would serve a rerun's winners)
    step "$prog" stub env "${extra_env[@]}" "LD_PRELOAD=$pre" XMATUNE_MODE=tune XMATUNE_CACHE=off \
        "XMATUNE_POLICY=$work/stubs/$prog.yaml" "XMATUNE_LOG=$work/logs/$prog.stub.jsonl" \
        XMATUNE_VERBOSE=1 "${c_stub[@]}"
    if [ "$hand" != - ]; then
        step "$prog" hand env "${extra_env[@]}" "LD_PRELOAD=$pre" XMATUNE_MODE=tune XMATUNE_CACHE=off \
            "XMATUNE_POLICY=$hand" "XMATUNE_LOG=$work/logs/$prog.hand.jsonl" "${c_hand[@]}"
    fi
done <"$work/programs.tsv"

table=$work/stub-tune.md
"$PY" "$here/stub_fill.py" table "$work" >"$table"
rc=$?
echo
cat "$table"
echo
echo "stub_tune.sh: $(($(date +%s) - start)) s; work folder: $work (stubs/: each skeleton and its filled copy)" >&2
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    cp "$table" "$OUT/stub-tune.md"
    (cd "$work" && tar czf "$OUT/stub-tune.tar.gz" --exclude='./out' --exclude='./tmp' .) ||
        echo "stub_tune.sh: could not write $OUT/stub-tune.tar.gz" >&2
fi
exit $rc
