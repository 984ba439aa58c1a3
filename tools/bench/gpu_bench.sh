#!/usr/bin/env bash
# gpu_bench.sh -- issue 13's benchmarks in one call each, on the GPU machine; and their dry
# run here.
#
#   bash tools/bench/gpu_bench.sh quality BUILD_GPU LIBXMATUNE   # items 1+2, ~2-3 min
#   bash tools/bench/gpu_bench.sh threads BUILD                  # item 3, ~1-2 min
#   bash tools/bench/gpu_bench.sh selftest BUILD_GPU BUILD       # no GPU: what can be checked
#
# quality: tools/bench/choice_quality.py on the cubin BUILD_GPU/gen/cq_kernels.cubin (from
#   `bash tests/gpu/build.sh BUILD_GPU`) with the shim LIBXMATUNE: xmatune's winners against
#   the best of each space, and Triton's do_bench beside them (needs python3 with cupy;
#   torch and triton for the Triton table, which says "skipped" without them).
# threads: tools/bench/bench_threads.sh BUILD (the CPU build: bench_launch, nulldrv, the
#   shim) with 1, 8 and 16 threads pinned one per core.
# CQ_BUDGET_S (default 240): quality starts no new key after that many seconds.
# Each prints a header (date, GPU, driver, commit, SM clock before and after) and Markdown
# tables on stdout, and writes them to $OUT when it is set (gpu-bench-quality.md with
# choice_quality.json and the tune log; gpu-bench-threads.md). Exit status: 0 when the
# targets hold, 1 when one is missed or a step failed, 2 on bad usage.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
PY=${PYTHON:-python3}
what=${1:-}
[ $# -ge 1 ] && shift

clock() {
    if command -v nvidia-smi >/dev/null 2>&1; then
        nvidia-smi --query-gpu=clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1
    else
        echo "(no nvidia-smi)"
    fi
}

header() { # TITLE COMMAND
    echo "## $1"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    if command -v nvidia-smi >/dev/null 2>&1; then
        echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 | sed 's/, / driver /')"
    else
        echo "- GPU: (no nvidia-smi)"
    fi
    echo "- CPU: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -1)"
    echo "- commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' (with local changes)')"
    echo "- SM clock before (current, max): $(clock)"
    echo "- command: \`$2\`"
    echo
}

save() { # NAME FILE: to $OUT when set
    if [ -n "${OUT:-}" ]; then
        mkdir -p "$OUT" && cp "$2" "$OUT/$1"
    fi
}

case $what in
quality)
    [ $# -ge 2 ] || { echo "usage: gpu_bench.sh quality BUILD_GPU LIBXMATUNE" >&2; exit 2; }
    cubin=$1/gen/cq_kernels.cubin
    shim=$2
    [ -f "$cubin" ] || { echo "gpu_bench.sh: $cubin missing (bash tests/gpu/build.sh $1)" >&2; exit 2; }
    [ -f "$shim" ] || { echo "gpu_bench.sh: $shim missing (cmake --build build)" >&2; exit 2; }
    work=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/gpu_bench.XXXXXX")}
    mkdir -p "$work"
    md=$work/gpu-bench-quality.tmp
    {
        header "Choice quality and Triton's way (issue 13, items 1 and 2)" \
            "bash tools/bench/gpu_bench.sh quality $1 $2"
        "$PY" "$here/choice_quality.py" --cubin "$cubin" --shim "$shim" --out "$work" \
            --budget-s "${CQ_BUDGET_S:-240}"
        echo "$?" >"$work/cq.rc"
        echo
        echo "- SM clock after (current, max): $(clock)"
    } | tee "$md"
    save gpu-bench-quality.md "$md"
    rm -f "$md"
    rc=$(cat "$work/cq.rc" 2>/dev/null || echo 1)
    [ "$rc" = 0 ] || exit 1
    ;;
threads)
    [ $# -ge 1 ] || { echo "usage: gpu_bench.sh threads BUILD" >&2; exit 2; }
    md=$(mktemp)
    {
        header "The launch path under threads (issue 13, item 3)" "bash tools/bench/gpu_bench.sh threads $1"
        THREADS=${THREADS:-1 8 16} ROUNDS=${ROUNDS:-5} bash "$here/bench_threads.sh" "$1"
        echo "$?" >"$md.rc"
        echo
        echo "- SM clock after (current, max): $(clock)"
    } | tee "$md"
    save gpu-bench-threads.md "$md"
    rc=$(cat "$md.rc" 2>/dev/null || echo 1)
    rm -f "$md" "$md.rc"
    [ "$rc" = 0 ] || exit 1
    ;;
selftest)
    [ $# -ge 2 ] || { echo "usage: gpu_bench.sh selftest BUILD_GPU BUILD" >&2; exit 2; }
    rc=0
    "$PY" "$here/choice_quality.py" --selftest >/dev/null && echo "selftest: choice_quality logic (fake timings): ok" ||
        { echo "selftest: choice_quality logic: FAILED"; rc=1; }
    "$PY" "$here/choice_quality.py" --check-policy "$2/tools/xmatune" >/dev/null &&
        echo "selftest: policies and keys (xmatune check): ok" || { echo "selftest: policies: FAILED"; rc=1; }
    "$PY" -m py_compile "$here/choice_quality.py" && echo "selftest: choice_quality.py compiles: ok" || rc=1
    if [ -f "$1/gen/cq_kernels.cubin" ]; then echo "selftest: $1/gen/cq_kernels.cubin: present"; else
        echo "selftest: $1/gen/cq_kernels.cubin: MISSING (bash tests/gpu/build.sh $1)"
        rc=1
    fi
    # the whole quality pipeline (tuning subprocess, log, Triton's way, harness, tables) on
    # stand-ins for numpy/cupy/torch/triton with a virtual clock (tools/bench/cq/fake)
    fake=$(mktemp -d "${TMPDIR:-/tmp}/gpu_bench_fake.XXXXXX")
    if PYTHONPATH=$here/cq/fake "$PY" "$here/choice_quality.py" --cubin "$1/gen/cq_kernels.cubin" \
        --shim "$2/shim/libxmatune.so" --out "$fake" >"$fake/stdout" 2>"$fake/stderr" &&
        grep -q "16 keys: median quality 1.000" "$fake/stdout" && grep -q "same winner as xmatune for 16 of 16" "$fake/stdout"; then
        echo "selftest: choice_quality.py end to end on the stand-ins: ok"
        rm -rf "$fake"
    else
        echo "selftest: choice_quality.py end to end on the stand-ins: FAILED ($fake)"
        rc=1
    fi
    # the threads benchmark, briefly, with what this machine has
    t="1"
    [ "$(nproc)" -ge 2 ] && t="1 2"
    if THREADS=$t ROUNDS=1 N=20000 bash "$here/bench_threads.sh" "$2" >/dev/null 2>&1; then
        echo "selftest: bench_threads.sh ($t threads, 1 round): ran, targets met"
    else
        echo "selftest: bench_threads.sh ($t threads, 1 round): exit $? (1: a target missed; 2: missing)"
        rc=1
    fi
    exit $rc
    ;;
*)
    echo "usage: gpu_bench.sh quality BUILD_GPU LIBXMATUNE | threads BUILD | selftest BUILD_GPU BUILD" >&2
    exit 2
    ;;
esac
