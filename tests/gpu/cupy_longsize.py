#!/usr/bin/env python3
"""cupy_longsize -- a CuPy RawKernel with a 64-bit size argument (GPU suite, issue 28).

One `extern "C"` kernel, y = a*x + 1 with one thread per element and a bounds check on a
`long long n`, called 30 times with 32 threads per block over 2^24 + 3 floats. An
`extern "C"` name carries no types: its 8-byte size looks like a pointer to a tool that
guesses (the policy skeleton once took it for one and left the key untuned). Its hand
policy is tests/gpu/cupy_longsize.yaml (n: i64).

Prints LAUNCHES (= calls), CONFIG, TIME_MS (median per call, CuPy events around each
call); writes y's raw bytes to argv[1]. Exits 77 with a SKIP line when cupy or a device
is missing.
"""
import sys

if len(sys.argv) < 2:
    print("usage: cupy_longsize.py OUTPUT_FILE", file=sys.stderr)
    sys.exit(2)
try:
    import cupy as cp
    import numpy as np
except Exception as e:
    print(f"SKIP cupy not importable: {e}")
    sys.exit(77)
try:
    if cp.cuda.runtime.getDeviceCount() < 1:
        raise RuntimeError("no device")
except Exception as e:
    print(f"SKIP cupy sees no CUDA device: {e}")
    sys.exit(77)

SRC = r"""
extern "C" __global__ void scale_add_ll(const float* x, float* y, float a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + 1.0f;
}
"""
kern = cp.RawKernel(SRC, "scale_add_ll")
try:  # NVRTC must be there; compiling launches nothing
    if hasattr(kern, "compile"):
        kern.compile()
except Exception as e:
    print(f"SKIP cupy cannot compile a RawKernel (NVRTC?): {e}")
    sys.exit(77)

n = (1 << 24) + 3
BLOCK = 32  # the program's own (poor) block
grid = (n + BLOCK - 1) // BLOCK
rng = np.random.default_rng(11)
x = cp.asarray((rng.random(n, dtype=np.float32) + 0.25).astype(np.float32))
y = cp.zeros(n, dtype=cp.float32)
stream = cp.cuda.Stream(non_blocking=True)
launches, times = 0, []
with stream:
    for i in range(30):
        ev0, ev1 = cp.cuda.Event(), cp.cuda.Event()
        ev0.record(stream)
        kern((grid,), (BLOCK,), (x, y, np.float32(0.75 + 0.01 * i), np.int64(n)))
        ev1.record(stream)
        launches += 1
        times.append((ev0, ev1))
    stream.synchronize()
ms = sorted(cp.cuda.get_elapsed_time(a, b) for a, b in times)
med = ms[len(ms) // 2] if len(ms) % 2 else 0.5 * (ms[len(ms) // 2 - 1] + ms[len(ms) // 2])

yh = cp.asnumpy(y)
xh = cp.asnumpy(x)
want = np.float32(0.75 + 0.01 * 29) * xh + np.float32(1.0)
if not np.allclose(yh, want, rtol=1e-6, atol=0):
    print("cupy_longsize: y differs from the host computation", file=sys.stderr)
    sys.exit(1)
with open(sys.argv[1], "wb") as f:
    f.write(yh.tobytes())
print(f"TIME_MS {med:.6f}")
print(f"CONFIG grid=({grid},1,1) block=({BLOCK},1,1) shared=0")
print(f"LAUNCHES {launches}")
