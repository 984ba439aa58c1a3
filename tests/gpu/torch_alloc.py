#!/usr/bin/env python3
"""torch_alloc -- protect: auto on PyTorch's allocators (GPU suite, torch_alloc.sh).

PyTorch allocates x and y (2^26 floats, 256 MiB each) and a small tensor z that its
caching allocator may place next to them; a CuPy RawKernel (extern "C", launched with
cuLaunchKernel) updates y in place, y += a*x, poorly configured, 5 times. The policy
(torch_alloc.yaml) declares no buffer: the shim must find y's memory through the
driver whatever the allocator -- the default caching allocator (whole segments),
expandable segments (virtual memory, 20 MB mapped pieces) or cudaMallocAsync (a pool)
-- and leave y and z exactly as the program computes them. Prints the SHA-256 of y and
z, and LAUNCHES. Exits 77 with a SKIP line when torch or cupy is missing.
"""
import hashlib
import sys

try:
    import torch
    import cupy as cp
except Exception as e:
    print(f"SKIP torch or cupy not importable: {e}")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIP no CUDA device")
    sys.exit(77)

SRC = r"""
extern "C" __global__ void axpy_inplace(const float* x, float* y, float a, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}
"""
n = 1 << 26
g = torch.Generator(device="cuda").manual_seed(7)
x = torch.rand(n, device="cuda", generator=g)
z = torch.rand(1000, device="cuda", generator=g)
y = torch.rand(n, device="cuda", generator=g)
k = cp.RawKernel(SRC, "axpy_inplace")
xc, yc = cp.from_dlpack(x), cp.from_dlpack(y)
launches = 0
for _ in range(5):
    k((64,), (64,), (xc, yc, cp.float32(0.5), cp.int64(n)))
    launches += 1
torch.cuda.synchronize()
h = lambda t: hashlib.sha256(t.cpu().numpy().tobytes()).hexdigest()[:16]
print("ALLOC", torch.cuda.get_allocator_backend())
print("HASH y", h(y), "z", h(z))
print("LAUNCHES", launches)
