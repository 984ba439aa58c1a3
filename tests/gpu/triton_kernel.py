#!/usr/bin/env python3
"""triton_kernel -- @triton.jit kernels launched N times (GPU suite).

Two kernels: an elementwise fused multiply-add (launched 16 times with BLOCK=1024)
and a row softmax (launched 8 times, one program per row). Inputs are made on the
CPU and copied, outputs are read back with copies, so the only kernel launches
are the Triton ones: LAUNCHES = 24. Triton launches with cuLaunchKernel (linked
-lcuda) or cuLaunchKernelEx (dlsym on its own libcuda handle).

Triton compiles its launcher with gcc at first use; run.sh points TRITON_CACHE_DIR
at a fresh folder for every run, so that this also happens under LD_PRELOAD.
Outputs' raw bytes go to argv[1]. Exits 77 with a SKIP line when triton, torch or a
CUDA device is missing.
"""
import sys

if len(sys.argv) < 2:
    print("usage: triton_kernel.py OUTPUT_FILE", file=sys.stderr)
    sys.exit(2)
try:
    import torch
    import triton
    import triton.language as tl
except Exception as e:
    print(f"SKIP triton/torch not importable: {e}")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIP torch sees no CUDA device")
    sys.exit(77)


@triton.jit
def fma_kernel(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * a + y, mask=mask)


@triton.jit
def softmax_kernel(in_ptr, out_ptr, stride, ncols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < ncols
    v = tl.load(in_ptr + row * stride + offs, mask=mask, other=-float("inf"))
    v = v - tl.max(v, axis=0)
    e = tl.exp(v)
    tl.store(out_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=mask)


gen = torch.Generator().manual_seed(99)
n = 1 << 22
dev = torch.device("cuda", 0)
x = (torch.rand(n, generator=gen) + 0.25).to(dev)
y = (torch.rand(n, generator=gen) - 1.5).to(dev)
out = torch.empty_like(x)
rows, cols = 4096, 1000
m = (torch.randn(rows, cols, generator=gen) + 1e-3).to(dev)
sm = torch.empty_like(m)
torch.cuda.synchronize()

launches = 0
for i in range(16):
    src = x if i == 0 else out
    fma_kernel[(triton.cdiv(n, 1024),)](src, y, out, 0.5 + i * 0.01, n, BLOCK=1024)
    launches += 1
for i in range(8):
    softmax_kernel[(rows,)](m if i == 0 else sm, sm, m.stride(0), cols, BLOCK=1024)
    launches += 1
torch.cuda.synchronize()

with open(sys.argv[1], "wb") as f:
    f.write(out.cpu().numpy().tobytes())
    f.write(sm.cpu().numpy().tobytes())
print(f"LAUNCHES {launches}")
