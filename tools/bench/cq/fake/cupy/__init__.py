"""Stand-in cupy for the choice_quality dry run (see ../README.md)."""
import json
import os

float32, int32, uint64 = "f32", "i32", "u64"
_clock = [0.0]  # virtual ms
# Trigger arguments of each kernel: (name, position), as tools/bench/cq/policy.yaml names them.
TRIGGERS = {"cq_saxpy": [("n", 0)], "cq_transpose": [("rows", 2), ("cols", 3)],
            "cq_sum_atomic": [("n", 2)], "cq_rowsum_smem": [("rows", 2), ("cols", 3)],
            "cq_compute": [("n", 0), ("iters", 1)], "cq_tiny": [("n", 3)],
            "cq_axpb_inplace": [("n", 3)], "cq_rowsum_atomic": [("rows", 2), ("cols", 3)]}
_tuned = set()


def cost(grid, block):
    t = grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2]
    return 0.01 + abs(t - 65536) / 65536.0 * 0.01 + 0.001 * (block[0] % 7)


class _Array:
    def __init__(self, n):
        self.n = n

    def fill(self, v):
        _clock[0] += 0.001

    def copy(self):
        return _Array(self.n)

    def __setitem__(self, k, v):
        _clock[0] += 0.001


def empty(n, dtype=None):
    return _Array(n)


zeros = empty


class random:
    class RandomState:
        def __init__(self, seed):
            pass

        def random_sample(self, n, dtype=None):
            return _Array(n)

        def randint(self, lo, hi, n, dtype=None):
            return _Array(n)


def _space(name, key):
    out = []
    for b in (64, 128, 256, 512, 1024):
        for m in (1, 2, 4):
            out.append(((132 * m, 1, 1) if name != "cq_transpose" else (64 * m, 64, 1), (b, 1, 1), 0))
    return out


def _tune_event(name, grid, block, shared, args):
    key = ", ".join("%s=%d" % (n, args[i]) for n, i in TRIGGERS[name])
    if (name, key) in _tuned or not os.environ.get("XMATUNE_LOG"):
        return
    _tuned.add((name, key))
    obj = lambda d, st="ok": {"grid": list(d[0]), "block": list(d[1]), "shared": d[2],  # noqa: E731
                             "status": st, "config": "G=%d,B=%d" % (d[0][0], d[1][0])}
    sp = _space(name, key)
    best = min(sp, key=lambda d: cost(d[0], d[1]))
    ev = {"event": "tune", "kernel": name, "name": name, "key": key, "benchmarked": True,
          "own": obj((tuple(grid), tuple(block), shared)), "winner": obj(best),
          "candidates": [obj(d) for d in sp] + [obj(((1, 1, 1), (32, 1, 1), 0), "rejected")],
          "duration_ms": 80.0, "phases_ms": {"clock_warmup": 50.0, "module_load": 0.3}}
    with open(os.environ["XMATUNE_LOG"], "a") as f:
        f.write(json.dumps(ev) + "\n")


class _Kernel:
    def __init__(self, name):
        self.name = name

    def __call__(self, grid, block, args, shared_mem=0):
        assert 1 <= len(grid) <= 3 and 1 <= len(block) <= 3 and isinstance(args, tuple)
        if self.name == "cq_spin":
            _clock[0] += args[0] / 1e6
            return
        assert len(args) == {"cq_saxpy": 5, "cq_compute": 4}.get(self.name, 4 if self.name != "cq_sum_atomic" else 3)
        _tune_event(self.name, grid, block, shared_mem, args)
        _clock[0] += cost(grid, block)


class RawModule:
    def __init__(self, path=None):
        assert path and os.path.exists(path), path

    def get_function(self, name):
        return _Kernel(name)


class _Pool:
    def free_all_blocks(self):
        pass


def get_default_memory_pool():
    return _Pool()


class cuda:
    class Event:
        def record(self, stream=None):
            self.t = _clock[0]

        def synchronize(self):
            pass

    @staticmethod
    def get_elapsed_time(a, b):
        return b.t - a.t

    class Device:
        def synchronize(self):
            pass

    class runtime:
        @staticmethod
        def getDeviceProperties(i):
            return {"name": b"fake GPU (tools/bench/cq/fake)"}

        @staticmethod
        def driverGetVersion():
            return 13000
