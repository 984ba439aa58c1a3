"""Stand-in triton.testing.do_bench for the choice_quality dry run (see ../README.md)."""
import cupy


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    ts = []
    for _ in range(5):
        t0 = cupy._clock[0]
        fn()
        ts.append(cupy._clock[0] - t0)
    return sorted(ts)[2] if return_mode == "median" else sum(ts) / len(ts)
