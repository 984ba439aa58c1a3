#!/usr/bin/env python3
"""choice_quality.py -- how good xmatune's choice is, and Triton's way beside it (issue 13).

    python3 tools/bench/choice_quality.py --cubin build-gpu/gen/cq_kernels.cubin \\
        --shim build/shim/libxmatune.so [--out DIR] [--budget-s 300] [--no-triton] \\
        [--kernels cq_axpb_inplace,cq_tiny]
    python3 tools/bench/choice_quality.py --selftest     # the logic, fake timings, no GPU

The kernels are tools/bench/cq/kernels.cu (one cubin), the policies
tools/bench/cq/policy.yaml, the keys (problem sizes) and each key's own config in
KERNELS below. One job, three phases, all launching the same cubin through CuPy's
RawModule:

1. *Tune*: this script runs itself (--program) under LD_PRELOAD=SHIM with XMATUNE_POLICY,
   XMATUNE_LOG and XMATUNE_CACHE: every key launched with its program's own config,
   twice. The log's `tune` events give xmatune's winner, every config of the space (the
   candidates, with their status) and the tuning time.
2. *Triton's way* (no shim): for every key, `triton.testing.do_bench` over every valid
   config of the space (the candidates that passed verification, and the program's own),
   with its defaults (mean; L2 cleared before each run) and with xmatune's statistic
   (return_mode="median"); the closure restores/resets what the kernel needs (as
   triton.autotune's pre_hook does inside its timed call). Its pick, and its time to tune.
3. *The independent harness* (no shim): every config of the space, the program's own, a
   default (block 256, grid covering the data), all measured alike: REPS (3) rounds, the
   configs' order rotated each round; each round 10 untimed runs, then ITERS (100) timed
   runs queued behind a spin kernel so that they run back to back, each between its own
   CUDA events; a round's figure is the median of its runs. A config's time is the median
   of its rounds, its spread (max - min) / median over them.

Quality = best time of the space / time of xmatune's winner (both from phase 3).
Targets: median >= 0.97, none below 0.90. Prints Markdown on stdout (and writes
choice_quality.md, choice_quality.json, the tune log to --out when given).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
POLICY = os.path.join(HERE, "cq", "policy.yaml")
REPS, ITERS, WARM = 3, 100, 10


def cdiv(a, b):
    return -(-a // b)


# ---- the kernels, their keys and their programs' own configs ---------------------------
# Each key: the trigger values (as the tune event's key text names them); "own": the
# program's own (grid, block, shared); "default": block 256 and a grid covering the data.
# "reset": what a benchmark of the kernel must put back before each run ("zero OUT",
# "restore Y"), for Triton's closure. None: nothing.
def _k(name, kind, keys, own, default, reset=None):
    return {"name": name, "kind": kind, "keys": keys, "own": own, "default": default, "reset": reset}


KERNELS = [
    _k("cq_saxpy", "memory-bound 1-D", [{"n": 1 << 20}, {"n": 1 << 25}],
       lambda k: ((32, 1, 1), (128, 1, 1), 0),
       lambda k: ((cdiv(k["n"], 256), 1, 1), (256, 1, 1), 0)),
    _k("cq_transpose", "2-D blocks (transpose)", [{"rows": 4096, "cols": 4096}, {"rows": 8192, "cols": 2048}],
       lambda k: ((k["cols"], cdiv(k["rows"], 32), 1), (1, 32, 1), 0),
       lambda k: ((cdiv(k["cols"], 16), cdiv(k["rows"], 16), 1), (16, 16, 1), 0)),
    _k("cq_sum_atomic", "atomic reduction (int)", [{"n": 1 << 22}, {"n": 1 << 26}],
       lambda k: ((64, 1, 1), (1024, 1, 1), 0),
       lambda k: ((cdiv(k["n"], 256), 1, 1), (256, 1, 1), 0), reset="zero"),
    _k("cq_rowsum_smem", "shared-memory reduction", [{"rows": 16384, "cols": 1024}, {"rows": 1024, "cols": 65536}],
       lambda k: ((k["rows"], 1, 1), (32, 1, 1), 32 * 4),
       lambda k: ((k["rows"], 1, 1), (256, 1, 1), 256 * 4)),
    _k("cq_compute", "compute-bound", [{"n": 1 << 20, "iters": 512}, {"n": 1 << 23, "iters": 64}],
       lambda k: ((256, 1, 1), (256, 1, 1), 0),
       lambda k: ((cdiv(k["n"], 256), 1, 1), (256, 1, 1), 0)),
    _k("cq_tiny", "tiny, latency-bound", [{"n": 1000}, {"n": 16384}],
       lambda k: ((cdiv(k["n"], 32), 1, 1), (32, 1, 1), 0),
       lambda k: ((cdiv(k["n"], 256), 1, 1), (256, 1, 1), 0)),
    _k("cq_axpb_inplace", "in place", [{"n": 1 << 22}, {"n": 1 << 25}],
       lambda k: ((64, 1, 1), (64, 1, 1), 0),
       lambda k: ((cdiv(k["n"], 256), 1, 1), (256, 1, 1), 0), reset="restore"),
    _k("cq_rowsum_atomic", "float atomics (tolerance)", [{"rows": 4096, "cols": 4096}, {"rows": 256, "cols": 262144}],
       lambda k: ((1, k["rows"], 1), (32, 1, 1), 0),
       lambda k: ((cdiv(k["cols"], 256), k["rows"], 1), (256, 1, 1), 0), reset="zero"),
]


def key_text(key):
    return ", ".join("%s=%d" % kv for kv in key.items())


def parse_key_text(text):
    """'rows=4096, cols=16384' -> {'rows': 4096, 'cols': 16384} (None if not of that form)."""
    out = {}
    for part in text.split(", "):
        name, eq, val = part.partition("=")
        if not eq:
            return None
        try:
            out[name] = int(val)
        except ValueError:
            return None
    return out


def dims_of(d):
    """(grid, block, shared) of a tune event's config object."""
    return (tuple(d["grid"]), tuple(d["block"]), int(d.get("shared", 0)))


def fmt_dims(c):
    g, b, s = c
    t = "(%s) x (%s)" % (",".join(map(str, g)), ",".join(map(str, b)))
    return t + (" +%dB" % s if s else "")


def read_tune_events(path):
    """{(kernel, key tuple): event} of the benchmarked tune events of a log (the last wins)."""
    found = {}
    with open(path) as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("event") != "tune" or not e.get("benchmarked", True):
                continue
            key = parse_key_text(e.get("key", ""))
            if key is None:
                continue
            found[(e["kernel"], tuple(sorted(key.items())))] = e
    return found


def space_of(ev):
    """The configs of the space that passed verification, the program's own first:
    [(dims, label)], no duplicates."""
    seen, out = set(), []
    own = dims_of(ev["own"])
    out.append((own, "own"))
    seen.add(own)
    for c in ev.get("candidates", []):
        if c.get("status") != "ok":
            continue
        d = dims_of(c)
        if d not in seen:
            seen.add(d)
            out.append((d, c.get("config", "?")))
    return out


# ---- phase 3's statistics (pure: the self-test feeds it fake timers) --------------------
def measure_configs(configs, timer, reps=REPS):
    """configs: [dims]; timer(dims) -> list of per-run ms (one round). Each round runs every
    config, the order rotated by one each round. Returns {dims: (median of the rounds'
    medians, spread = (max - min) / median, [round medians])}."""
    rounds = {c: [] for c in configs}
    n = len(configs)
    for r in range(reps):
        for i in range(n):
            c = configs[(i + r) % n]
            rounds[c].append(statistics.median(timer(c)))
    out = {}
    for c, meds in rounds.items():
        m = statistics.median(meds)
        out[c] = (m, (max(meds) - min(meds)) / m if m > 0 else 0.0, meds)
    return out


def quality_of(times, space, winner):
    """best time of the space / the winner's time, and the best config."""
    best = min(space, key=lambda c: times[c][0])
    return times[best][0] / times[winner][0], best


def triton_pick(space, bench):
    """Triton's way over the space: bench(dims) -> ms per config; the argmin (the first of
    equals, as min() in triton.autotune) and {dims: ms}."""
    t = {c: bench(c) for c in space}
    return min(space, key=lambda c: t[c]), t


def verdict(qualities):
    if not qualities:
        return "no keys measured", False
    med, low = statistics.median(qualities), min(qualities)
    below = sum(q < 0.90 for q in qualities)
    ok = med >= 0.97 and below == 0
    return ("%d keys: median quality %.3f (target >= 0.97), lowest %.3f, %d below 0.90 (target 0): %s"
            % (len(qualities), med, low, below, "targets met" if ok else "TARGETS MISSED")), ok


# ---- the tables ---------------------------------------------------------------------------
def tables(rows, header):
    """rows: one dict per key (see run_key). Returns Markdown."""
    L = [header, ""]
    L.append("| kernel | kind | key | configs | own ms | default ms | xmatune winner | winner ms "
             "| best of the space | best ms | quality | spread (max of the four) |")
    L.append("| --- | --- | --- | ---: | ---: | ---: | --- | ---: | --- | ---: | ---: | ---: |")
    qs = []
    for r in rows:
        if "error" in r:
            L.append("| %s | %s | %s | %s |" % (r["kernel"], r["kind"], r["key"], r["error"]))
            continue
        qs.append(r["quality"])
        L.append("| %s | %s | %s | %d | %.4f | %.4f | %s | %.4f | %s | %.4f | %.3f | %.1f %% |" % (
            r["kernel"], r["kind"], r["key"], r["nconfigs"], r["own_ms"], r["default_ms"],
            r["winner_label"], r["winner_ms"], r["best_label"], r["best_ms"], r["quality"],
            100 * r["spread"]))
    v, ok = verdict(qs)
    L += ["", "**Quality.** " + v, ""]
    L.append("Triton's way on the same spaces (`triton.testing.do_bench`, no shim, the same cubin "
             "through CuPy's RawModule; resets inside the timed closure where the kernel needs them). "
             "*pick quality*: the harness's best time / its time for that pick. *tune s*: wall time "
             "of do_bench over the space. xmatune's tuning time is the tune event's `duration_ms` "
             "(in brackets: less the clock warm-up and the module load).")
    L.append("")
    L.append("| kernel | key | configs | xmatune winner | xmatune tune ms | do_bench (mean) pick "
             "| same | quality | tune s | do_bench (median) pick | same | quality | tune s |")
    L.append("| --- | --- | ---: | --- | ---: | --- | --- | ---: | ---: | --- | --- | ---: | ---: |")
    for r in rows:
        if "error" in r:
            continue
        cells = [r["kernel"], r["key"], str(r["nconfigs"]), r["winner_label"],
                 "%.1f (%.1f)" % (r["xmt_tune_ms"], r["xmt_tune_rest_ms"])]
        for mode in ("mean", "median"):
            t = r.get("triton", {}).get(mode)
            if not t:
                cells += ["skipped", "", "", ""]
                continue
            cells += [t["label"], "yes" if t["same"] else "no", "%.3f" % t["quality"], "%.2f" % t["tune_s"]]
        L.append("| " + " | ".join(cells) + " |")
    L.append("")
    L.append("The tuner's own medians (its tune event, in its rounds) beside the harness's, µs: "
             "where the two disagree on the order of the winner and the harness's best, the "
             "quality lost is the timing's; where they agree, it is the tie rule's choice "
             "within its limit (docs/tuning.md, step 8).")
    L.append("")
    L.append("| kernel | key | winner | tuner | harness | harness's best | tuner | harness "
             "| best / winner, tuner | best / winner, harness |")
    L.append("| --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |")

    def us(v):
        return "%.2f" % (1000 * v) if v is not None else "—"
    for r in rows:
        if "error" in r:
            continue
        tw, tb = r.get("tuner_winner_ms"), r.get("tuner_best_ms")
        L.append("| %s | %s | %s | %s | %.2f | %s | %s | %.2f | %s | %.3f |" % (
            r["kernel"], r["key"], r["winner_label"], us(tw), 1000 * r["winner_ms"],
            r["best_label"], us(tb), 1000 * r["best_ms"],
            "%.3f" % (tb / tw) if tw and tb else "—", r["quality"]))
    tq = {m: [r["triton"][m]["quality"] for r in rows if r.get("triton", {}).get(m)] for m in ("mean", "median")}
    for m in ("mean", "median"):
        if tq[m]:
            same = sum(r["triton"][m]["same"] for r in rows if r.get("triton", {}).get(m))
            L.append("")
            L.append("do_bench (%s): same winner as xmatune for %d of %d keys; its picks' %s" % (
                m, same, len(tq[m]), verdict(tq[m])[0]))
    return "\n".join(L) + "\n", ok


def label_of(space, c):
    for d, lab in space:
        if d == c:
            return lab
    return fmt_dims(c)


def tuner_median(ev, dims):
    """The tune event's own median (ms) of the config with these dims; None when it was not
    timed there (rejected, or the event has no times)."""
    for c in [ev.get("own", {})] + ev.get("candidates", []):
        if c.get("median_ms") is not None and c.get("grid") and dims_of(c) == dims:
            return c["median_ms"]
    return None


def row_for(kspec, key, ev, times, triton):
    """One table row from a key's tune event, phase-3 times and Triton's picks."""
    space = space_of(ev)
    sdims = [d for d, _ in space]
    own, winner = dims_of(ev["own"]), dims_of(ev["winner"])
    default = kspec["default"](key)
    q, best = quality_of(times, sdims, winner)
    ph = ev.get("phases_ms", {})
    r = {"kernel": kspec["name"], "kind": kspec["kind"], "key": key_text(key), "nconfigs": len(sdims),
         "own_ms": times[own][0], "default_ms": times[default][0],
         "winner_label": label_of(space, winner), "winner_ms": times[winner][0],
         "best_label": label_of(space, best), "best_ms": times[best][0], "quality": q,
         "spread": max(times[c][1] for c in (own, default, winner, best)),
         "xmt_tune_ms": ev.get("duration_ms", float("nan")),
         "xmt_tune_rest_ms": ev.get("duration_ms", float("nan")) - ph.get("clock_warmup", 0.0)
         - ph.get("module_load", 0.0),
         "winner": winner, "best": best, "triton": {},
         "tuner_winner_ms": tuner_median(ev, winner), "tuner_best_ms": tuner_median(ev, best)}
    for mode, (pick, tune_s) in (triton or {}).items():
        r["triton"][mode] = {"pick": pick, "label": label_of(space, pick), "same": pick == winner,
                             "quality": times[best][0] / times[pick][0], "tune_s": tune_s}
    return r


# ---- the GPU parts ------------------------------------------------------------------------
class Gpu:
    """The cubin, each key's buffers and launches, through CuPy (imported here only)."""

    def __init__(self, cubin):
        import cupy as cp
        import numpy as np
        self.cp, self.np = cp, np
        self.mod = cp.RawModule(path=cubin)
        self.fn = {}

    def func(self, name):
        if name not in self.fn:
            self.fn[name] = self.mod.get_function(name)
        return self.fn[name]

    def setup(self, kspec, key):
        """(args, reset) of one key: the launch arguments and the closure's reset (or None)."""
        cp, np = self.cp, self.np
        rs = cp.random.RandomState(1234)
        name, i32, f32 = kspec["name"], np.int32, np.float32
        if name == "cq_saxpy":
            n = key["n"]
            x, y = rs.random_sample(n, dtype=cp.float32), rs.random_sample(n, dtype=cp.float32)
            return (i32(n), f32(2.5), x, y, cp.empty(n, cp.float32)), None
        if name == "cq_transpose":
            r, c = key["rows"], key["cols"]
            return (rs.random_sample(r * c, dtype=cp.float32), cp.empty(r * c, cp.float32), i32(r), i32(c)), None
        if name == "cq_sum_atomic":
            x = rs.randint(0, 10, key["n"], dtype=cp.int32)
            out = cp.zeros(1, cp.uint64)
            return (x, out, i32(key["n"])), out.fill
        if name == "cq_rowsum_smem":
            r, c = key["rows"], key["cols"]
            return (rs.randint(0, 10, r * c, dtype=cp.int32), cp.empty(r, cp.int32), i32(r), i32(c)), None
        if name == "cq_compute":
            n = key["n"]
            return (i32(n), i32(key["iters"]), rs.random_sample(n, dtype=cp.float32), cp.empty(n, cp.float32)), None
        if name == "cq_tiny":
            n = key["n"]
            return (rs.random_sample(n, dtype=cp.float32), rs.random_sample(n, dtype=cp.float32),
                    cp.empty(n, cp.float32), i32(n)), None
        if name == "cq_axpb_inplace":
            y0 = rs.random_sample(key["n"], dtype=cp.float32)
            y = y0.copy()
            return (y, f32(0.5), f32(1.0), i32(key["n"])), lambda v=None: y.__setitem__(slice(None), y0)
        if name == "cq_rowsum_atomic":
            r, c = key["rows"], key["cols"]
            out = cp.zeros(r, cp.float32)
            return (rs.random_sample(r * c, dtype=cp.float32), out, i32(r), i32(c)), out.fill
        raise KeyError(name)

    def launch(self, name, dims, args):
        g, b, s = dims
        self.func(name)(g, b, args, shared_mem=s)

    def sync(self):
        self.cp.cuda.Device().synchronize()

    def calibrate_spin(self):
        """Clock cycles per ms of cq_spin, measured (the clock rate is not in CUDA 13's props)."""
        cp = self.cp
        spin = self.func("cq_spin")
        for _ in range(3):  # the clock up first
            spin((1,), (1,), (self.np.int64(2_000_000),))
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        spin((1,), (1,), (self.np.int64(20_000_000),))
        e.record()
        e.synchronize()
        self.cycles_per_ms = 20_000_000 / cp.cuda.get_elapsed_time(s, e)

    def round_times(self, name, dims, args, iters=ITERS, warm=WARM):
        """One round: warm untimed runs, then iters runs queued behind a spin, each between
        its own events. Returns the per-run ms. The spin is doubled (up to 3 times) when
        queuing took longer than it, which would let host gaps into the timings."""
        cp, np = self.cp, self.np
        f = self.func(name)
        g, b, s = dims
        for _ in range(warm):
            f(g, b, args, shared_mem=s)
        spin_ms = 4.0
        for _ in range(4):
            ev = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(iters)]
            self.func("cq_spin")((1,), (1,), (np.int64(int(spin_ms * self.cycles_per_ms)),))
            t0 = time.perf_counter()
            for a, z in ev:
                a.record()
                f(g, b, args, shared_mem=s)
                z.record()
            queued_ms = (time.perf_counter() - t0) * 1e3
            ev[-1][1].synchronize()
            if queued_ms < 0.8 * spin_ms:
                break
            spin_ms *= 2
        return [cp.cuda.get_elapsed_time(a, z) for a, z in ev]


def program(args):
    """Phase 1, run under the shim: every key with its program's own config, twice."""
    gpu = Gpu(args.cubin)
    for ks in KERNELS:
        for key in ks["keys"]:
            a, _ = gpu.setup(ks, key)
            own = ks["own"](key)
            gpu.launch(ks["name"], own, a)  # tuned here
            gpu.launch(ks["name"], own, a)  # a cache hit
            gpu.sync()
            print("PROGRAM %s %s own=%s" % (ks["name"], key_text(key), fmt_dims(own)), flush=True)
            del a
            gpu.cp.get_default_memory_pool().free_all_blocks()
    return 0


def run_tuning(args, work):
    log, cache = os.path.join(work, "cq.tune.jsonl"), os.path.join(work, "cq.cache.jsonl")
    for p in (log, cache):
        if os.path.exists(p):
            os.unlink(p)
    # the caller's XMATUNE_* variables are not inherited (a stray one would change what is
    # measured); --env sets one for the tuning run on purpose (an A/B of an option)
    env = {k: v for k, v in os.environ.items() if not k.startswith("XMATUNE_")}
    env.update(LD_PRELOAD=os.path.abspath(args.shim), XMATUNE_POLICY=args.policy, XMATUNE_LOG=log,
               XMATUNE_CACHE=cache, XMATUNE_MODE="tune", XMATUNE_VERBOSE="1")
    env.update(kv.split("=", 1) for kv in args.env or [])
    t0 = time.perf_counter()
    cmd = [sys.executable, os.path.abspath(__file__), "--program", "--cubin", args.cubin]
    if args.kernels:
        cmd += ["--kernels", args.kernels]
    p = subprocess.run(cmd,
                       env=env, capture_output=True, text=True, timeout=args.tune_timeout)
    wall = time.perf_counter() - t0
    with open(os.path.join(work, "cq.tune.out"), "w") as f:
        f.write(p.stdout + "\n--- stderr\n" + p.stderr)
    if p.returncode != 0:
        sys.stderr.write("choice_quality: the tuning run failed (rc %d):\n%s\n" % (p.returncode, p.stderr[-3000:]))
    return read_tune_events(log), wall, p.returncode


def triton_bench_factory(gpu, ks, args_, reset):
    """do_bench over launches of one config, with the reset inside the closure."""
    import triton.testing as tt
    name = ks["name"]

    def make(mode):
        def bench(dims):
            g, b, s = dims
            f = gpu.func(name)
            if reset is None:
                fn = lambda: f(g, b, args_, shared_mem=s)  # noqa: E731
            else:
                def fn():
                    reset(0)
                    f(g, b, args_, shared_mem=s)
            if mode == "mean":
                return tt.do_bench(fn)
            return tt.do_bench(fn, return_mode="median")
        return bench
    return make


def run_key(gpu, ks, key, ev, use_triton):
    a, reset = gpu.setup(ks, key)
    space = [d for d, _ in space_of(ev)]
    tri = {}
    if use_triton:
        make = triton_bench_factory(gpu, ks, a, reset)
        for mode in ("mean", "median"):
            t0 = time.perf_counter()
            pick, _ = triton_pick(space, make(mode))
            tri[mode] = (pick, time.perf_counter() - t0)
    configs = list(space)
    for extra in (ks["default"](key),):
        if extra not in configs:
            configs.append(extra)
    times = measure_configs(configs, lambda d: gpu.round_times(ks["name"], d, a))
    gpu.sync()
    row = row_for(ks, key, ev, times, tri)
    row["times"] = {fmt_dims(c): t for c, t in times.items()}
    del a
    gpu.cp.get_default_memory_pool().free_all_blocks()
    return row


def header_text(args, tune_wall):
    import cupy as cp
    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    drv = cp.cuda.runtime.driverGetVersion()
    return ("Choice quality, %s UTC, %s, CUDA driver API %d; shim %s; tuning run %.1f s.\n"
            "Harness: every valid config of each key's space + the program's own + a default, "
            "%d rounds (order rotated) x (%d untimed + %d timed runs queued behind a spin kernel, "
            "each between its own CUDA events); a round's figure is the median of its runs, a "
            "config's the median of its rounds; spread = (max - min) / median of the rounds."
            % (time.strftime("%Y-%m-%d %H:%M", time.gmtime()), name, drv, args.shim, tune_wall,
               REPS, WARM, ITERS))


def main_gpu(args):
    work = args.out or os.environ.get("OUT") or "."
    os.makedirs(work, exist_ok=True)
    t_start = time.perf_counter()
    events, tune_wall, rc = run_tuning(args, work)
    gpu = Gpu(args.cubin)
    gpu.calibrate_spin()
    use_triton = not args.no_triton
    if use_triton:
        try:
            import torch  # noqa: F401
            import triton.testing  # noqa: F401
            if torch.cuda.current_stream().cuda_stream != 0:  # the legacy stream, as CuPy's
                raise RuntimeError("torch's current stream is not the legacy default stream")
        except Exception as e:
            sys.stderr.write("choice_quality: Triton's way skipped: %s\n" % e)
            use_triton = False
    rows = []
    for ks in KERNELS:
        for key in ks["keys"]:
            ev = events.get((ks["name"], tuple(sorted(key.items()))))
            base = {"kernel": ks["name"], "kind": ks["kind"], "key": key_text(key)}
            if ev is None:
                rows.append(dict(base, error="no tune event (see cq.tune.out)"))
                continue
            if ev.get("untuned"):
                rows.append(dict(base, error="untuned: %s" % ev["untuned"]))
                continue
            if time.perf_counter() - t_start > args.budget_s:
                rows.append(dict(base, error="not measured: past --budget-s %d" % args.budget_s))
                continue
            t0 = time.perf_counter()
            row = run_key(gpu, ks, key, ev, use_triton)
            sys.stderr.write("choice_quality: %s %s: quality %.3f (%.1f s)\n"
                             % (ks["name"], key_text(key), row["quality"], time.perf_counter() - t0))
            rows.append(row)
    md, ok = tables(rows, header_text(args, tune_wall))
    sys.stdout.write(md)
    with open(os.path.join(work, "choice_quality.md"), "w") as f:
        f.write(md)
    with open(os.path.join(work, "choice_quality.json"), "w") as f:
        json.dump(rows, f, indent=1, default=str)
    return 0 if ok and rc == 0 else 1


# ---- self-test: the logic with fake timings (no GPU, no numpy) ---------------------------
def selftest():
    import random
    import tempfile
    ks = KERNELS[0]
    key = ks["keys"][0]
    own, default = ks["own"](key), ks["default"](key)
    cands = [((132 * b, 1, 1), (t, 1, 1), 0) for t in (128, 256, 512, 1024) for b in (1, 2, 4)]
    true_ms = {c: 0.010 + 0.001 * i for i, c in enumerate(cands)}
    true_ms[own], true_ms[default] = 0.5, 0.02
    fast = cands[5]
    true_ms[fast] = 0.004

    def obj(c, status="ok", label=None):
        return {"grid": list(c[0]), "block": list(c[1]), "shared": c[2], "status": status,
                "config": label or fmt_dims(c)}
    ev = {"event": "tune", "kernel": ks["name"], "key": key_text(key), "benchmarked": True,
          "own": obj(own), "winner": obj(cands[6], label="W"), "duration_ms": 120.0,
          "phases_ms": {"clock_warmup": 50.0, "module_load": 0.5},
          "candidates": [obj(c) for c in cands] + [obj(((1, 1, 1), (64, 1, 1), 0), "rejected")]}
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write('{"event":"start"}\nnot json\n' + json.dumps(ev) + "\n")
        f.write(json.dumps(dict(ev, benchmarked=False, winner=obj(own))) + "\n")  # a cache check: ignored
    evs = read_tune_events(f.name)
    os.unlink(f.name)
    got = evs[(ks["name"], tuple(sorted(key.items())))]
    assert got["winner"]["config"] == "W", got
    assert parse_key_text("rows=4096, cols=16384") == {"rows": 4096, "cols": 16384}
    assert parse_key_text("x.shape=(3,)") is None
    space = space_of(got)
    assert [d for d, _ in space][0] == own and len(space) == len(cands) + 1, space  # rejected left out

    rnd = random.Random(7)
    calls = []

    def timer(c):
        calls.append(c)
        return [true_ms[c] * (1 + 0.01 * rnd.random()) for _ in range(ITERS)]
    configs = [d for d, _ in space] + [default]
    times = measure_configs(configs, timer)
    assert len(calls) == REPS * len(configs)
    assert calls[0] != calls[len(configs)], "the order must rotate between rounds"
    for c in configs:
        assert abs(times[c][0] - true_ms[c]) / true_ms[c] < 0.02 and times[c][1] < 0.02
    q, best = quality_of(times, [d for d, _ in space], dims_of(got["winner"]))
    assert best == fast and abs(q - 0.004 / true_ms[cands[6]]) < 0.01, (q, best)

    tri = {"mean": triton_pick([d for d, _ in space], lambda c: true_ms[c])[0]}
    assert tri["mean"] == fast
    row = row_for(ks, key, got, times, {"mean": (tri["mean"], 3.2)})
    assert row["triton"]["mean"]["same"] is False and abs(row["triton"]["mean"]["quality"] - 1) < 1e-9
    assert row["xmt_tune_rest_ms"] == 69.5 and row["own_ms"] > 0.4, row
    assert row["winner_label"] == fmt_dims(cands[6]), row["winner_label"]
    md, ok = tables([row, {"kernel": "k", "kind": "x", "key": "n=1", "error": "no tune event"}], "H")
    assert not ok and "TARGETS MISSED" in md and "no tune event" in md and "| skipped |" in md, md
    # the tuner's own medians beside the harness's: the winner's and the best's, from the
    # event's candidates (none where it did not time them)
    assert row["tuner_winner_ms"] is None and row["tuner_best_ms"] is None
    timed = dict(got, candidates=[dict(obj(c), median_ms=true_ms[c] * 0.9) for c in cands])
    row3 = row_for(ks, key, timed, times, None)
    assert row3["tuner_winner_ms"] == true_ms[cands[6]] * 0.9 and row3["tuner_best_ms"] == 0.004 * 0.9
    md3, _ = tables([row3], "H")
    line = [l for l in md3.splitlines() if l.startswith("| %s | %s | %s | %.2f |" % (
        ks["name"], key_text(key), row3["winner_label"], 1000 * true_ms[cands[6]] * 0.9))]
    assert len(line) == 1 and line[0].endswith("| %.3f | %.3f |" % (0.004 / true_ms[cands[6]], row3["quality"])), md3
    # a winner that is the best: quality 1, targets met
    good = dict(got, winner=obj(fast, label="F"))
    row2 = row_for(ks, key, good, times, None)
    md2, ok2 = tables([row2], "H")
    assert ok2 and row2["quality"] == 1.0 and "targets met" in md2, md2
    assert verdict([1.0, 0.96, 0.99])[1] and not verdict([1.0, 1.0, 0.89])[1] and not verdict([0.96, 0.96])[1]
    # every kernel's own and default configs are computable for every key
    for k in KERNELS:
        for kk in k["keys"]:
            for f in ("own", "default"):
                g, b, s = k[f](kk)
                assert len(g) == 3 and len(b) == 3 and b[0] * b[1] * b[2] <= 1024 and min(g) >= 1, (k["name"], f)
    assert len(KERNELS) >= 8 and all(len(k["keys"]) >= 2 for k in KERNELS)
    print("choice_quality selftest: ok (%d kernels, %d keys)" % (len(KERNELS), sum(len(k["keys"]) for k in KERNELS)))
    print(md2)
    return 0


def check_policy(xmatune, policy):
    """Dry run of the policies, no GPU: `xmatune check` with each key's values and own
    config; each kernel's entry must render the key as the tune event will name it
    (key_text) and leave at least two valid candidates. Returns the number of problems."""
    import re
    bad = 0
    for ks in KERNELS:
        for key in ks["keys"]:
            g, b, sh = ks["own"](key)
            cmd = [xmatune, "check", "--all", "--grid0", ",".join(map(str, g)), "--block0",
                   ",".join(map(str, b)), "--shared0", str(sh)]
            for name, v in key.items():
                cmd += ["--set", "%s=%d" % (name, v)]
            p = subprocess.run(cmd + [policy], capture_output=True, text=True)
            sec = re.split(r"\n(?=\S+:\d+: match: )", p.stdout)
            mine = [x for x in sec if re.match(r"\S+:\d+: match: %s\n" % ks["name"], x)]
            m = re.search(r"key: (.*) \(\d+ bytes\)", mine[0]) if mine else None
            v = re.search(r"space after conditions: (\d+) of (\d+) candidates valid", mine[0]) if mine else None
            ok = p.returncode == 0 and m and m.group(1) == key_text(key) and v and int(v.group(1)) >= 2
            print("check %-17s %-24s key %-26s valid %s: %s" % (
                ks["name"], key_text(key), m.group(1) if m else "?", v.group(1) + "/" + v.group(2) if v else "?",
                "ok" if ok else "PROBLEM"))
            if not ok:
                bad += 1
                sys.stderr.write(p.stdout[-2000:] + p.stderr[-2000:])
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cubin")
    ap.add_argument("--shim")
    ap.add_argument("--policy", default=POLICY)
    ap.add_argument("--out")
    ap.add_argument("--budget-s", type=int, default=300, help="start no new key after this (default 300)")
    ap.add_argument("--tune-timeout", type=int, default=120)
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--env", action="append", metavar="XMATUNE_VAR=VALUE",
                    help="set this variable for the tuning run (the caller's XMATUNE_* are not "
                         "passed on); repeatable")
    ap.add_argument("--kernels", metavar="NAME,...",
                    help="only these kernels' keys (a comparison of a few keys fits a short GPU call)")
    ap.add_argument("--program", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--check-policy", metavar="XMATUNE", help="dry run: `XMATUNE check` of every key (no GPU)")
    args = ap.parse_args()
    if args.kernels:
        names = args.kernels.split(",")
        unknown = sorted(set(names) - {k["name"] for k in KERNELS})
        if unknown:
            ap.error("--kernels: no kernel %s (known: %s)" % (", ".join(unknown), ", ".join(k["name"] for k in KERNELS)))
        KERNELS[:] = [k for k in KERNELS if k["name"] in names]
    if args.selftest:
        return selftest()
    if args.check_policy:
        return 1 if check_policy(args.check_policy, args.policy) else 0
    if not args.cubin or not os.path.exists(args.cubin):
        ap.error("--cubin FILE is needed (tests/gpu/build.sh builds build-gpu/gen/cq_kernels.cubin)")
    if args.program:
        return program(args)
    if not args.shim or not os.path.exists(args.shim):
        ap.error("--shim LIBXMATUNE is needed")
    return main_gpu(args)


if __name__ == "__main__":
    sys.exit(main())
