#!/usr/bin/env bash
# run.sh -- the never-slower benchmark (issue 48, item 6): the GPU suite's tuning programs
# and public CUDA programs that we did not write, each run three ways, one after another:
#   plain   without the shim
#   first   LD_PRELOAD=<shim> XMATUNE_AUTO=1, a fresh empty cache    (it tunes)
#   warm    the same settings again, on the cache the first run wrote
# then table.py prints one Markdown report: wall time and each program's own reported
# figures side by side (first/plain, warm/plain), and from each run's log the trial
# helpers started, keys tuned, rechecks, and the shim's host µs at the first launch of a
# cached key (the `cache_hit` events); docs/benchmarks.md, "Never slower".
#
#   bash tools/bench/warm/run.sh [options] SRC
#       SRC   the sources of the public programs: a folder holding polybenchGpu/,
#             cuda-samples/ and gpu-rodinia/ (and VERSIONS: folder, repository, commit),
#             as .bench-src/ at the repository root is laid out. Nothing is downloaded.
# Options:
#   --build DIR      where the programs are built (default <repo>/build-bench)
#   --no-build       use what DIR already holds
#   --build-only     build, then stop (exit 1 if any program failed to build)
#   --shim PATH      the shim (default <repo>/build/shim/libxmatune.so)
#   --work DIR       work folder (default: a new /tmp/xmatune-warm.*)
#   --programs LIST  programs to run, in order (default: $DEFAULT_PROGRAMS below);
#                    `--list` prints every known program
#   --policy PATH    XMATUNE_POLICY=PATH for every shim run (a file or a folder)
#   --suite-policies each suite program runs with its own examples/gpu/<name>.yaml
#   --no-auto        no XMATUNE_AUTO=1 (with a policy: only the kernels it names are tuned)
#   --env VAR=VALUE  one more setting for the shim runs (repeatable; wins over the defaults)
#   --dry            the simulated driver (no GPU): scenarios of tests/integration's app_rt,
#                    from the CPU build (--shim's folder above shim/); SRC not needed
# Environment: BENCH_TUNE_BUDGET_MS (XMATUNE_TOTAL_BUDGET_MS for the shim runs, default 4000),
# BENCH_TIMEOUT_S (a shim run's limit, default 40), BENCH_PLAIN_TIMEOUT_S (a plain run's,
# default 20), BENCH_BUDGET_S (no new run after this many seconds from the start, builds
# included; default 300), JOBS (parallel builds), NVCC, PYTHON, OUT (if set: warm.md and a
# tar of the logs are saved there). The caller's XMATUNE_* variables and LD_PRELOAD are
# cleared. Sized for about 6 minutes on an H100 with the defaults (not yet measured there).
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
PY=${PYTHON:-python3}

# Public programs first (the issue's figures are theirs), then the suite; the suite's fault
# and hang programs last.
PUBLIC_DEFAULT="pb_syr2k pb_2dconv pb_gemm pb_lu rd_needle cs_matrixMul cs_reduction cs_transpose"
PUBLIC_EXTRA="pb_corr cs_sortingNetworks cs_scan cs_simpleTemplates cs_convolutionSeparable"
SUITE="saxpy transpose atomic_rowsum inplace_axpb fixed_block dyn_smem inplace_gs8 tied_pair row_softmax const_taps wavefront blocked_lu bitonic oob_blocks spin_grid"
DRY="dry_saxpy dry_basic dry_sizes dry_hop"
DEFAULT_PROGRAMS="$PUBLIC_DEFAULT $SUITE"

src='' build='' shim='' work='' programs='' policy='' suite_pol=0 auto=1 dry=0 do_build=1 build_only=0
extra_env=()
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$(abspath "$2"); shift 2 ;;
    --no-build) do_build=0; shift ;;
    --build-only) build_only=1; shift ;;
    --shim) shim=$(abspath "$2"); shift 2 ;;
    --work) work=$(abspath "$2"); shift 2 ;;
    --programs) programs=$2; shift 2 ;;
    --policy) policy=$(abspath "$2"); shift 2 ;;
    --suite-policies) suite_pol=1; shift ;;
    --no-auto) auto=0; shift ;;
    --env) extra_env+=("$2"); shift 2 ;;
    --dry) dry=1; shift ;;
    --list) echo "default: $DEFAULT_PROGRAMS"; echo "more: $PUBLIC_EXTRA"; echo "dry: $DRY"; exit 0 ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//; /^set -u/d'; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) [ -z "$src" ] || { echo "run.sh: one source folder only" >&2; exit 2; }; src=$(abspath "$1"); shift ;;
    esac
done
shim=${shim:-$root/build/shim/libxmatune.so}
cpubuild=$(cd "$(dirname "$shim")/.." 2>/dev/null && pwd)
if [ "$dry" = 1 ]; then
    programs=${programs:-$DRY}
else
    programs=${programs:-$DEFAULT_PROGRAMS}
    [ -n "$src" ] || { echo "run.sh: no source folder (SRC; see --help)" >&2; exit 2; }
    [ -d "$src" ] || { echo "run.sh: no folder $src" >&2; exit 2; }
fi
build=${build:-$root/build-bench}
T_SHIM=${BENCH_TIMEOUT_S:-40}
T_PLAIN=${BENCH_PLAIN_TIMEOUT_S:-20}
BUDGET=${BENCH_BUDGET_S:-300}
TUNE_MS=${BENCH_TUNE_BUDGET_MS:-4000}
start=$(date +%s)

unset LD_PRELOAD
for v in $(compgen -e | grep '^XMATUNE_' || true); do unset "$v"; done
[ -f "$shim" ] || [ "$build_only" = 1 ] || { echo "run.sh: no shim at $shim" >&2; exit 2; }

# --- the programs -------------------------------------------------------------------------
# group NAME: suite, public or dry (empty: unknown).
group() {
    case " $SUITE " in *" $1 "*) echo suite; return ;; esac
    case " $PUBLIC_DEFAULT $PUBLIC_EXTRA " in *" $1 "*) echo public; return ;; esac
    case " $DRY " in *" $1 "*) echo dry; return ;; esac
}
# parser NAME: how table.py reads the program's own figures.
parser() {
    case "$1" in
    pb_*) echo polybench ;;
    rd_needle) echo needle ;;
    cs_matrixMul) echo matrixmul ;;
    cs_simpleTemplates) echo simpletemplates ;;
    cs_*) echo cudasamples ;;
    dry_*) echo app ;;
    *) echo suite ;;
    esac
}
# srcdir NAME: the folder of SRC the program comes from (its VERSIONS line).
srcdir() {
    case "$1" in pb_*) echo polybenchGpu ;; rd_*) echo gpu-rodinia ;; cs_*) echo cuda-samples ;; esac
}
version() {
    local g d line
    g=$(group "$1")
    if [ "$g" = suite ] || [ "$g" = dry ]; then
        echo "xmatune@$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
        return
    fi
    d=$(srcdir "$1")
    line=$(awk -v d="$d" -F'\t' '$1 == d {print $2 "@" substr($3, 1, 7)}' "$src/VERSIONS" 2>/dev/null)
    if [ -z "$line" ]; then # a clone instead of VERSIONS: its origin and commit
        line="$(git -C "$src/$d" remote get-url origin 2>/dev/null || echo "$d")@$(git -C "$src/$d" rev-parse --short=7 HEAD 2>/dev/null || echo '?')"
    fi
    line=${line#https://github.com/}
    echo "${line%.git}"
}

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$(command -v nvcc || echo "$CUDA_HOME/bin/nvcc")}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
NVF=(-O2 -std=c++17 -gencode 'arch=compute_90,code=[sm_90,compute_90]')

# nvcc_line NAME: the program's nvcc arguments after the common flags (sources included).
# PolyBench/GPU: cudaThreadSynchronize is gone from CUDA 13 (its replacement has the same
# meaning); the sizes are the sources' own, except LU and correlation (2048 makes their
# CPU reference run 15 s and 5 s: 1024 keeps the plain run under 3 s), set through
# polybench_size.h.
nvcc_line() {
    local pb=$src/polybenchGpu/CUDA cs=$src/cuda-samples/Samples
    local pbf=(-DcudaThreadSynchronize=cudaDeviceSynchronize -w) csf=(-I"$src/cuda-samples/Common" -w)
    case "$1" in
    pb_syr2k) echo "${pbf[@]}" "$pb/SYR2K/syr2k.cu" ;;
    pb_2dconv) echo "${pbf[@]}" "$pb/2DCONV/2DConvolution.cu" ;;
    pb_gemm) echo "${pbf[@]}" "$pb/GEMM/gemm.cu" ;;
    pb_lu) echo "${pbf[@]}" -include "$here/polybench_size.h" -DXMT_PB_N=1024 "$pb/LU/lu.cu" ;;
    pb_corr) echo "${pbf[@]}" -include "$here/polybench_size.h" -DXMT_PB_M=1024 -DXMT_PB_N=1024 "$pb/CORR/correlation.cu" ;;
    rd_needle) echo -w -DTIMING -I"$src/gpu-rodinia/cuda/util" "$src/gpu-rodinia/cuda/nw/needle.cu" ;;
    cs_matrixMul) echo "${csf[@]}" "$cs/0_Introduction/matrixMul/matrixMul.cu" ;;
    cs_simpleTemplates) echo "${csf[@]}" "$cs/0_Introduction/simpleTemplates/simpleTemplates.cu" ;;
    cs_reduction) echo "${csf[@]}" "$cs/2_Concepts_and_Techniques/reduction/reduction.cpp" \
        "$cs/2_Concepts_and_Techniques/reduction/reduction_kernel.cu" ;;
    cs_scan) local d=$cs/2_Concepts_and_Techniques/scan
        echo "${csf[@]}" "$d/main.cpp" "$d/scan.cu" "$d/scan_gold.cpp" ;;
    cs_sortingNetworks) local d=$cs/2_Concepts_and_Techniques/sortingNetworks
        echo "${csf[@]}" "$d/main.cpp" "$d/bitonicSort.cu" "$d/oddEvenMergeSort.cu" "$d/sortingNetworks_validate.cpp" ;;
    cs_convolutionSeparable) local d=$cs/2_Concepts_and_Techniques/convolutionSeparable
        echo "${csf[@]}" "$d/main.cpp" "$d/convolutionSeparable.cu" "$d/convolutionSeparable_gold.cpp" ;;
    cs_transpose) echo "${csf[@]}" "$cs/6_Performance/transpose/transpose.cu" ;;
    *) echo -Xcompiler -Wall "$root/examples/gpu/$1.cu" ;; # the suite
    esac
}

# cmdline NAME RUN: the command that runs the program (one word per line).
cmdline() {
    case "$1" in
    rd_needle) printf '%s\n' "$build/bin/$1" 2048 10 ;; # Rodinia's own run script's sizes
    dry_*) printf '%s\n' "$cpubuild/tests/integration/app_rt" "${1#dry_}" "$work/out/$1.$2.bin" 3 ;;
    pb_* | cs_*) printf '%s\n' "$build/bin/$1" ;;
    *) printf '%s\n' "$build/bin/$1" "$work/out/$1.$2.bin" ;; # the suite writes its outputs
    esac
}

for p in $programs; do
    [ -n "$(group "$p")" ] || { echo "run.sh: unknown program $p (--list)" >&2; exit 2; }
done
mkdir -p "$build/bin" "$build/logs"
if [ "$build_only" = 0 ]; then
    work=${work:-$(mktemp -d "${TMPDIR:-/tmp}/xmatune-warm.XXXXXX")}
    mkdir -p "$work/logs" "$work/out" "$work/tmp"
    work=$(cd "$work" && pwd)
fi

# --- build ----------------------------------------------------------------------------
if [ "$dry" = 0 ] && [ "$do_build" = 1 ]; then
    [ -x "$NVCC" ] || { echo "run.sh: nvcc not found (set NVCC or CUDA_HOME)" >&2; exit 2; }
    echo "run.sh: building $(echo "$programs" | wc -w) programs into $build/bin ($JOBS jobs)" >&2
    for p in $programs; do
        while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n 2>/dev/null || true; done
        rm -f "$build/bin/$p"
        # shellcheck disable=SC2046  # nvcc_line's words are paths without spaces
        ("$NVCC" "${NVF[@]}" $(nvcc_line "$p") -o "$build/bin/$p" >"$build/logs/$p.log" 2>&1
            echo $? >"$build/logs/$p.rc") &
    done
    wait
    built=0
    for p in $programs; do
        if [ ! -x "$build/bin/$p" ]; then
            echo "run.sh: FAILED to build $p ($build/logs/$p.log):" >&2
            tail -n 5 "$build/logs/$p.log" >&2
        else
            built=$((built + 1))
        fi
    done
    echo "run.sh: built $built of $(echo "$programs" | wc -w) in $(($(date +%s) - start)) s" >&2
fi
if [ "$build_only" = 1 ]; then
    for p in $programs; do [ -x "$build/bin/$p" ] || exit 1; done
    exit 0
fi

# --- record what ran ------------------------------------------------------------------------
{
    echo "# name	group	parser	version"
    for p in $programs; do printf '%s\t%s\t%s\t%s\n' "$p" "$(group "$p")" "$(parser "$p")" "$(version "$p")"; done
} >"$work/programs.tsv"
# XMT_PRELOAD_PREFIX (the sanitized test builds: scripts/sanitize.sh): a runtime that must
# come before the shim in LD_PRELOAD, as the integration tests put it
shim_env=(LD_PRELOAD="${XMT_PRELOAD_PREFIX:-}$shim" XMATUNE_VERBOSE=1 XMATUNE_TOTAL_BUDGET_MS="$TUNE_MS")
[ "$auto" = 1 ] && shim_env+=(XMATUNE_AUTO=1)
[ -n "$policy" ] && shim_env+=(XMATUNE_POLICY="$policy" XMATUNE_MODE=tune)
[ "$dry" = 1 ] && shim_env+=(XMATUNE_WARMUP_MS=0)
shim_env+=("${extra_env[@]}")
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    if [ "$dry" = 1 ]; then
        echo "GPU: none: the simulated driver ($cpubuild/simdriver), --dry"
    else
        echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
    fi
    echo "git: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ' (with uncommitted changes)')"
    echo "shim: $shim"
    echo "sources: ${src:-none}"
    echo "settings: ${shim_env[*]:1}$([ "$suite_pol" = 1 ] && echo ' (suite programs: XMATUNE_POLICY=examples/gpu/<name>.yaml)')"
    echo "limits: plain ${T_PLAIN} s, shim ${T_SHIM} s a run; no new run after ${BUDGET} s"
} >"$work/env.txt"
[ -f "$src/VERSIONS" ] && cp "$src/VERSIONS" "$work/VERSIONS"

# --- run ------------------------------------------------------------------------------------
# run NAME RUN [VAR=VALUE...]: one run; logs/NAME.RUN.{stdout,stderr,rc,wall,limit,note}.
run() {
    local name=$1 mode=$2 t=$T_SHIM
    shift 2
    local base="$work/logs/$name.$mode" cmd
    rm -f "$base".*
    [ "$mode" = plain ] && t=$T_PLAIN
    if [ $(($(date +%s) - start)) -gt "$BUDGET" ]; then
        echo "not run: time budget (${BUDGET} s) spent" >"$base.note"
        echo "run.sh: $name/$mode: not run (budget)" >&2
        return
    fi
    mapfile -t cmd < <(cmdline "$name" "$mode")
    if [ ! -x "${cmd[0]}" ]; then
        echo "not built (no ${cmd[0]})" >"$base.note"
        echo "run.sh: $name/$mode: not built" >&2
        return
    fi
    [ "$dry" = 1 ] && set -- "LD_LIBRARY_PATH=$cpubuild/simdriver" "$@"
    mkdir -p "$work/tmp/$name"
    local t0 t1
    t0=$(date +%s.%N)
    (cd "$work/tmp/$name" && timeout -k 10 "$t" env "$@" "${cmd[@]}" >"$base.stdout" 2>"$base.stderr" </dev/null)
    echo $? >"$base.rc"
    t1=$(date +%s.%N)
    echo "$t" >"$base.limit"
    awk "BEGIN{printf \"%.3f\n\", $t1 - $t0}" >"$base.wall"
    printf 'run.sh: %-24s %-5s rc=%-3s %6.2f s\n' "$name" "$mode" "$(cat "$base.rc")" "$(cat "$base.wall")" >&2
}

for p in $programs; do
    rm -f "$work/logs/$p.cache.jsonl"
    run "$p" plain
    envs=("${shim_env[@]}")
    if [ "$suite_pol" = 1 ] && [ "$(group "$p")" = suite ] && [ -f "$root/examples/gpu/$p.yaml" ]; then
        envs+=(XMATUNE_POLICY="$root/examples/gpu/$p.yaml" XMATUNE_MODE=tune)
    fi
    for mode in first warm; do
        run "$p" "$mode" "${envs[@]}" XMATUNE_LOG="$work/logs/$p.$mode.jsonl" XMATUNE_CACHE="$work/logs/$p.cache.jsonl"
    done
done

table="$work/warm.md"
"$PY" "$here/table.py" "$work" >"$table" 2>"$work/table.stderr"
rc=$?
if [ ! -s "$table" ]; then
    echo "run.sh: table.py failed:" >&2
    cat "$work/table.stderr" >&2
    rc=2
fi
echo
cat "$table"
echo
echo "run.sh: $(($(date +%s) - start)) s; work folder: $work" >&2
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    cp "$table" "$OUT/warm.md"
    (cd "$work" && tar czf "$OUT/warm-logs.tar.gz" --exclude='./out' --exclude='./tmp' .) ||
        echo "run.sh: could not write $OUT/warm-logs.tar.gz" >&2
fi
exit $rc
