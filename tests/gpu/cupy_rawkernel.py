#!/usr/bin/env python3
"""cupy_rawkernel -- CuPy RawKernel calls (GPU suite).

Two RawKernels (float and double/int arguments; CuPy compiles them with NVRTC and
launches them with cuLaunchKernel, fetched with dlsym through ctypes), called 20
and 10 times. Inputs are copied from NumPy arrays, outputs copied back: the only
kernel launches are the RawKernel calls, so LAUNCHES = number of calls. Outputs'
raw bytes go to argv[1]. Exits 77 with a SKIP line when cupy or a device is missing.
"""
import sys

if len(sys.argv) < 2:
    print("usage: cupy_rawkernel.py OUTPUT_FILE", file=sys.stderr)
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
extern "C" __global__ void saxpy_rk(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void poly_rk(const double* x, double* y, double c0, double c1,
                                   long long shift, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = c0 + c1 * x[(i + shift) % n] + y[i] * 0.5;
}
"""
saxpy = cp.RawKernel(SRC, "saxpy_rk")
poly = cp.RawKernel(SRC, "poly_rk")
try:  # NVRTC must be there; compiling launches nothing
    if hasattr(saxpy, "compile"):
        saxpy.compile()
        poly.compile()
except Exception as e:
    print(f"SKIP cupy cannot compile a RawKernel (NVRTC?): {e}")
    sys.exit(77)

rng = np.random.default_rng(7)
n = 1 << 20
xh = (rng.random(n, dtype=np.float32) + 0.25).astype(np.float32)
yh = (rng.random(n, dtype=np.float32) - 1.5).astype(np.float32)
dxh = rng.random(n) + 0.5
dyh = rng.random(n) - 2.0
x, y = cp.asarray(xh), cp.asarray(yh)
dx, dy = cp.asarray(dxh), cp.asarray(dyh)

launches = 0
for i in range(20):
    saxpy(((n + 255) // 256,), (256,), (x, y, np.float32(0.5 - 0.01 * i), np.int32(n)))
    launches += 1
for i in range(10):
    poly(((n + 127) // 128,), (128,), (dx, dy, np.float64(0.25), np.float64(-1.5 + i), np.int64(i * 1000),
                                       np.int32(n)))
    launches += 1
cp.cuda.Device(0).synchronize()

with open(sys.argv[1], "wb") as f:
    f.write(cp.asnumpy(y).tobytes())
    f.write(cp.asnumpy(dy).tobytes())
print(f"LAUNCHES {launches}")
