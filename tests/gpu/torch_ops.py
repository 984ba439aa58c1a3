#!/usr/bin/env python3
"""torch_ops -- a few PyTorch ops on CUDA tensors (GPU suite).

Inputs are made on the CPU with a seeded generator and copied to the GPU (copies
are not kernel launches), so every kernel this script causes runs inside the
profiled region. The kernels launched are counted with torch.profiler
(ProfilerActivity.CUDA, kernel events only: memcpy/memset activities are not
kernels) and printed as LAUNCHES n. Outputs' raw bytes go to argv[1].

Deterministic algorithms are requested so that two runs give the same bytes.
Exits 77 with a SKIP line when torch or a CUDA device is missing.
"""
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

if len(sys.argv) < 2:
    print("usage: torch_ops.py OUTPUT_FILE", file=sys.stderr)
    sys.exit(2)
try:
    import torch
    from torch.profiler import ProfilerActivity, profile
except Exception as e:  # ImportError and broken installs alike
    print(f"SKIP torch not importable: {e}")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIP torch sees no CUDA device")
    sys.exit(77)

# warn_only: an op without a deterministic variant warns instead of raising.
torch.use_deterministic_algorithms(True, warn_only=True)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False

gen = torch.Generator().manual_seed(1234)


def cpu_randn(*shape, dtype=torch.float32):
    t = torch.randn(*shape, generator=gen, dtype=torch.float32)
    t = torch.where(t == 0, torch.full_like(t, 0.5), t)  # non-zero
    return t.to(dtype)


dev = torch.device("cuda", 0)
a_h = cpu_randn(1024, 1024)
b_h = cpu_randn(1024, 512)
x_h = cpu_randn(64, 3, 64, 64)
w_h = cpu_randn(16, 3, 3, 3)
v_h = cpu_randn(1 << 20)
h_h = cpu_randn(256, 768, dtype=torch.float16)
torch.cuda.synchronize()
a, b, x, w, v, h = (t.to(dev) for t in (a_h, b_h, x_h, w_h, v_h, h_h))
torch.cuda.synchronize()

def is_kernel(e):
    """A GPU kernel event (not a memcpy/memset activity)."""
    name = e.name or ""
    if name.startswith(("Memcpy", "Memset", "cudaMemcpy", "cudaMemset")):
        return False
    dt = getattr(e, "device_type", None)
    return dt is not None and str(dt).endswith("CUDA")

# Under the shim, read its launch counter around the profiled region too, so that both
# counts cover the same window (PyTorch also launches kernels outside it: output copies,
# allocator fills).
try:
    import ctypes
    _count = ctypes.CDLL(None).xmatune_launch_count
    _count.restype = ctypes.c_ulonglong
except (OSError, AttributeError):
    _count = None
shim_before = _count() if _count else None
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    outs = []
    outs.append(a @ b)                                     # cuBLAS GEMM
    outs.append(torch.softmax(a, dim=1))                   # reduction kernels
    outs.append(torch.nn.functional.layer_norm(b, (512,)))
    outs.append(torch.exp(v) * 0.5 + torch.sin(v))         # elementwise
    outs.append(torch.cumsum(v, 0))                        # scan
    outs.append(torch.sort(v).values)                      # sort
    outs.append(torch.nn.functional.conv2d(x, w, padding=1))  # cuDNN
    outs.append(torch.relu(x).amax(dim=(2, 3)))
    outs.append((h @ h.t()).float())                       # half GEMM
    outs.append(torch.topk(v, 100).values)
    torch.cuda.synchronize()
    shim_after = _count() if _count else None

kernels = [e for e in prof.events() if is_kernel(e)]
launches = len(kernels)

with open(sys.argv[1], "wb") as f:
    for t in outs:
        f.write(t.detach().contiguous().cpu().numpy().tobytes())
print(f"KERNEL_NAMES {len({e.name for e in kernels})}")
print(f"LAUNCHES {launches}")
if shim_before is not None:
    print(f"SHIM_WINDOW {shim_after - shim_before}")
