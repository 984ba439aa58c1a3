#!/usr/bin/env bash
# build.sh -- builds the GPU suite's CUDA programs (no GPU needed).
#
#   bash tests/gpu/build.sh [BUILD_DIR]        (default: <repo>/build-gpu)
#
# Needs nvcc (CUDA 12.8+; checked with 13.0), g++ and xxd. Every program is built for
# sm_90 plus compute_90 PTX, -O2. Output layout:
#   BUILD_DIR/bin/<program>      the suite (tests/gpu) and the tuning programs (examples/gpu)
#   BUILD_DIR/gen/               dmod.cubin, dmod.ptx and the headers embedding them;
#                                cq_kernels.cubin (tools/bench/choice_quality.py)
#   BUILD_DIR/logs/<program>.log compiler output
#   BUILD_DIR/manifest.txt       the programs built
# Builds everything it can; exits 1 if anything failed (and says what).
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/build-gpu}
mkdir -p "$out/bin" "$out/gen" "$out/logs"
out=$(cd "$out" && pwd)

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$(command -v nvcc || echo "$CUDA_HOME/bin/nvcc")}
CXX=${CXX:-g++}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
ARCH=(-gencode 'arch=compute_90,code=[sm_90,compute_90]')
NVFLAGS=(-O2 -std=c++17 "${ARCH[@]}" -Xcompiler -Wall)

if [ ! -x "$NVCC" ]; then
    echo "build.sh: nvcc not found (set NVCC or CUDA_HOME)" >&2
    exit 1
fi
echo "build.sh: $("$NVCC" --version | tail -1), into $out, $JOBS jobs"

failed=()
names=()

# job NAME COMMAND...: runs COMMAND in the background, output to logs/NAME.log.
job() {
    local name=$1
    shift
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n 2>/dev/null || true; done
    rm -f "$out/bin/$name" "$out/logs/$name.rc"
    (
        ("$@") >"$out/logs/$name.log" 2>&1
        echo $? >"$out/logs/$name.rc"
    ) &
    names+=("$name")
}

cu() { # NAME SOURCE [extra nvcc flags...]
    local name=$1 src=$2
    shift 2
    job "$name" "$NVCC" "${NVFLAGS[@]}" "$@" -o "$out/bin/$name" "$src"
}

# The driver-API program: its module is compiled to a cubin and to PTX, embedded
# with xxd (the PTX NUL-terminated, as cuModuleLoadData wants text), and the host
# code is linked against the toolkit's stub libcuda.so (the real driver at run time).
# shellcheck disable=SC2317  # invoked indirectly, through job
build_driver_api() {
    set -e
    local g="$out/gen"
    "$NVCC" -cubin -O2 -gencode arch=compute_90,code=sm_90 -o "$g/dmod.cubin" "$here/dmod.cu"
    "$NVCC" -ptx -O2 -arch=compute_90 -o "$g/dmod.ptx" "$here/dmod.cu"
    (cd "$g" && xxd -i dmod.cubin | sed 's/^unsigned char/alignas(64) unsigned char/' >dmod_cubin.h)
    (cd "$g" && { cat dmod.ptx; printf '\0'; } >dmod_ptx && xxd -i dmod_ptx >dmod_ptx.h && rm -f dmod_ptx)
    "$CXX" -O2 -std=c++17 -Wall -Wextra -I"$g" -I"$CUDA_HOME/include" -o "$out/bin/driver_api" \
        "$here/driver_api.cpp" -L"$CUDA_HOME/lib64/stubs" -L"$CUDA_HOME/targets/x86_64-linux/lib/stubs" -lcuda
}

# The shim's verification kernels against its host rules (needs the CPU build's
# libxmtpolicy.a for the half/bfloat16 conversions: cmake --build build first).
# shellcheck disable=SC2317  # invoked indirectly, through job
build_gpucheck_edges() {
    set -e
    local g="$out/gen"
    (cd "$root/shim/session/gpucheck" && { cat kernels.ptx; printf '\0'; } >"$g/gpucheck_ptx")
    (cd "$g" && xxd -i gpucheck_ptx >gpucheck_ptx.h && rm -f gpucheck_ptx)
    cc -O2 -std=c11 -Wall -Wextra -I"$g" -I"$root/shim/session" -I"$root/policy" -I"$CUDA_HOME/include" \
        -o "$out/bin/gpucheck_edges" "$here/gpucheck_edges.c" "$root/shim/session/verify.c" \
        "${POLICY_LIB:-$root/build/policy/libxmtpolicy.a}" \
        -L"$CUDA_HOME/lib64/stubs" -L"$CUDA_HOME/targets/x86_64-linux/lib/stubs" -lcuda -lm
}

# What the verification kernels cost (tools/bench/gpucheck_bench.c): driver API only, plain C;
# it reads the PTX file(s) it compares at run time.
# shellcheck disable=SC2317  # invoked indirectly, through job
build_gpucheck_bench() {
    cc -O2 -std=c11 -Wall -Wextra -I"$CUDA_HOME/include" -o "$out/bin/gpucheck_bench" \
        "$root/tools/bench/gpucheck_bench.c" -L"$CUDA_HOME/lib64/stubs" -L"$CUDA_HOME/targets/x86_64-linux/lib/stubs" -lcuda
}

# probe_addr_hint: driver API only, plain C, linked against the stub libcuda.so. A probe
# for the GPU machine (README: "Probes"), not a suite program.
# shellcheck disable=SC2317  # invoked indirectly, through job
build_probe_addr_hint() {
    cc -O2 -std=c11 -Wall -Wextra -I"$CUDA_HOME/include" -o "$out/bin/probe_addr_hint" \
        "$here/probe_addr_hint.c" -L"$CUDA_HOME/lib64/stubs" -L"$CUDA_HOME/targets/x86_64-linux/lib/stubs" -lcuda
}

# The choice-quality benchmark's kernels (tools/bench/choice_quality.py loads this cubin
# with CuPy's RawModule, under the shim and without it). A job whose "program" is the cubin.
# shellcheck disable=SC2317  # invoked indirectly, through job
build_cq_kernels() {
    set -e
    "$NVCC" -cubin -O2 -gencode arch=compute_90,code=sm_90 -o "$out/gen/cq_kernels.cubin" \
        "$root/tools/bench/cq/kernels.cu"
    printf '#!/bin/sh\n# marker: gen/cq_kernels.cubin is built\n' >"$out/bin/cq_kernels"
    chmod +x "$out/bin/cq_kernels"
}

# tests/gpu: interposition
cu rt_kernels "$here/rt_kernels.cu"
cu ptds "$here/ptds.cu" --default-stream per-thread
cu launch_ex "$here/launch_ex.cu"
cu launch_paths "$here/launch_paths.cu"
cu threads "$here/threads.cu"
cu graph "$here/graph.cu"
cu graph_explicit "$here/graph_explicit.cu" # graph rows: saxpy.cu's kernel in explicit graphs
cu graph_captured "$here/graph_explicit.cu" -DXMT_CAPTURE # ... and in captured ones
cu launch_rate "$here/launch_rate.cu" # launch_rate.sh: launch rate with and without the shim
cu timing_ways "$root/tools/bench/cq/timing_ways.cu" # racing.sh: one in-place kernel timed six ways
job driver_api build_driver_api
job gpucheck_edges build_gpucheck_edges
job gpucheck_bench build_gpucheck_bench # the verification kernels' cost, two PTX builds side by side
job cq_kernels build_cq_kernels
job probe_addr_hint build_probe_addr_hint # issue 24: does a second process get our addresses?

# examples/gpu: tuning programs (each has <name>.yaml beside it)
for src in "$root"/examples/gpu/*.cu; do
    cu "$(basename "$src" .cu)" "$src"
done

wait
for n in "${names[@]}"; do
    if [ "$(cat "$out/logs/$n.rc" 2>/dev/null)" != 0 ] || [ ! -x "$out/bin/$n" ]; then failed+=("$n"); fi
done

: >"$out/manifest.txt"
for n in "${names[@]}"; do
    if [ -x "$out/bin/$n" ]; then echo "$n" >>"$out/manifest.txt"; fi
done
echo "build.sh: built $(wc -l <"$out/manifest.txt") programs: $(tr '\n' ' ' <"$out/manifest.txt")"
if [ ${#failed[@]} -gt 0 ]; then
    for n in "${failed[@]}"; do
        echo "build.sh: FAILED: $n (see $out/logs/$n.log):" >&2
        tail -n 20 "$out/logs/$n.log" >&2
    done
    exit 1
fi
exit 0
