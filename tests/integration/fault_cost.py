#!/usr/bin/env python3
"""What faulting candidates cost a program on the simulated driver (issue 48, item 3).

Runs an app scenario (tests/integration/app.c) under XMATUNE_AUTO=1 with a shim, a few
times, and prints per run: the program's wall time, the trial helpers started and what the
program waited for them (the `ms` of their trial_helper events: from spawn to the answer,
or for a spare the wait for its answer), the candidates that faulted and those skipped
after a fault. Not a test: docs/benchmarks.md, "Faults on the simulated driver", has its
figures and the commands.

  python3 tests/integration/fault_cost.py BUILD_DIR SHIM SCENARIO[:ARG] [RUNS] [VAR=VALUE ...]

SCENARIO:ARG gives the scenario its argv[4] (nocheck:4: four keys). With WARM=1 among the
VAR=VALUEs each run is followed by a warm run on its cache (the same XDG_CACHE_HOME),
printed after it. BUILD_DIR: a build tree (its simulated driver and app_rt); SHIM: the libxmatune.so to
preload (its helper is found beside it, ../trial/xmatune-trial), or `none` for the
program without the shim; VAR=VALUE: more
environment, e.g. SIMCUDA_HELPER_INIT_MS=550 (a helper start as long as on an H100) or
XMATUNE_TRIAL_SPARE=0.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def one(build, shim, scenario, extra, d, name="log.jsonl"):
    if True:
        log = os.path.join(d, name)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("XMATUNE_", "SIMCUDA_"))}
        env.update(LD_LIBRARY_PATH=os.path.join(build, "simdriver"), XMATUNE_AUTO="1",
                   XMATUNE_LOG=log, XMATUNE_WARMUP_MS="0", XDG_CACHE_HOME=os.path.join(d, "xdg"))
        if shim != "none":
            env["LD_PRELOAD"] = shim
        env.update(extra)
        app = os.path.join(build, "tests", "integration", "app_rt")
        t0 = time.monotonic()
        sc, _, arg = scenario.partition(":")
        p = subprocess.run([app, sc, os.path.join(d, "out"), "3"] + ([arg] if arg else []),
                           env=env, capture_output=True, text=True)
        wall = time.monotonic() - t0
        if p.returncode != 0:
            sys.exit("%s exited %d: %s" % (scenario, p.returncode, p.stderr))
        ev = [json.loads(line) for line in open(log)] if os.path.exists(log) else []
    starts = [e for e in ev if e["event"] == "trial_helper" and e["what"] in ("started", "restarted")]
    tunes = [e for e in ev if e["event"] == "tune"]
    cands = [c for e in tunes for c in e["candidates"]]
    return {"wall_s": wall, "keys": len(tunes),
            "benchmarked": sum(bool(e.get("benchmarked")) for e in tunes),
            "untuned": sum(bool(e.get("untuned")) for e in tunes), "helpers": len(starts), "spares": sum(bool(e.get("spare")) for e in starts),
            "waited_ms": sum(e.get("ms", 0) for e in starts),
            "each_ms": [round(e.get("ms", 0)) for e in starts],
            "faults": sum(c["status"] == "fault" for c in cands),
            "skipped_after_fault": sum(c["status"] == "skipped_after_fault" for c in cands)}


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    build, shim, scenario = sys.argv[1:4]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 and "=" not in sys.argv[4] else 3
    extra = dict(a.split("=", 1) for a in sys.argv[4:] if "=" in a)
    warm = extra.pop("WARM", "0") == "1"
    shim = shim if shim == "none" else os.path.abspath(shim)
    rs = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as d:
            rs.append(one(build, shim, scenario, extra, d))
            if warm:
                rs[-1]["warm"] = one(build, shim, scenario, extra, d, "warm.jsonl")
    for r in rs:
        for what, x in (("first", r), ("warm", r.get("warm"))):
            if x is None:
                continue
            print("%s: wall %.2f s, helpers %d (%d spares), waited %d ms for them %s, faults %d, "
                  "skipped after a fault %d; tune events %d (benchmarked %d, untuned %d)" %
                  (what, x["wall_s"], x["helpers"], x["spares"], x["waited_ms"], x["each_ms"],
                   x["faults"], x["skipped_after_fault"], x["keys"], x["benchmarked"],
                   x["untuned"]))
    print("median: wall %.2f s, waited %d ms for %d helpers" %
          (statistics.median(r["wall_s"] for r in rs), statistics.median(r["waited_ms"] for r in rs),
           statistics.median(r["helpers"] for r in rs)))


if __name__ == "__main__":
    main()
