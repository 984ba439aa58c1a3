#!/usr/bin/env python3
"""ab_table.py WORK: ab_shims.sh's table from its work folder (A.<pair>/ and B.<pair>/,
each a racing.sh work folder). Per program and build, over every tune event of every pair
and round: how many events, the tuning time (duration_ms less phases_ms.clock_warmup and
phases_ms.module_load) and the host time (what no driver call took: racing_table.py's
driver_split, which counts the polls inside polled_waits once), each as median [min-max],
and per event the cuMemcpyHtoD calls, the device-to-host copies (cuMemcpyDtoH and
cuMemcpyDtoHAsync calls, median [min-max]: mostly the helper's reads of verification results)
and the guard bytes (staged.guard_bytes). Standard library
only."""
import glob
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from racing_table import driver_split  # noqa: E402


def events(folder):
    for f in sorted(glob.glob(os.path.join(folder, "logs", "*.r*.jsonl"))):
        prog = os.path.basename(f).rsplit(".", 2)[0]
        for line in open(f, errors="replace"):
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if isinstance(e, dict) and e.get("event") == "tune" and e.get("benchmarked"):
                yield prog, e


def span(xs):
    return "%.2f [%.2f–%.2f]" % (statistics.median(xs), min(xs), max(xs)) if xs else "—"


def count_span(xs):
    return "%g [%d–%d]" % (statistics.median(xs), min(xs), max(xs)) if xs else "—"


def main(work):
    rows = {}
    for d in sorted(glob.glob(os.path.join(work, "[AB].*"))):
        m = re.match(r"([AB])\.(\d+)$", os.path.basename(d))
        if not m or not os.path.isdir(d):
            continue
        for prog, e in events(d):
            ph = e.get("phases_ms") or {}
            dc = e.get("driver_calls") or {}
            r = rows.setdefault((prog, m.group(1)), {"tuning": [], "host": [], "htod": set(), "dtoh": [],
                                                        "guard": set()})
            r["tuning"].append(e["duration_ms"] - ph.get("clock_warmup", 0) - ph.get("module_load", 0))
            split = driver_split(e)
            if split is not None:
                r["host"].append(split[-1])
            r["htod"].add((dc.get("cuMemcpyHtoD") or {}).get("calls", 0))
            r["dtoh"].append(sum((dc.get(k) or {}).get("calls", 0) for k in ("cuMemcpyDtoH", "cuMemcpyDtoHAsync")))
            r["guard"].add((e.get("staged") or {}).get("guard_bytes", 0))
    print("| program | build | events | tuning, ms | host, ms | HtoD calls per event | DtoH calls per event | guard bytes |")
    print("| --- | --- | ---: | --- | --- | --- | --- | --- |")
    for (prog, who), r in sorted(rows.items()):
        print("| %s | %s | %d | %s | %s | %s | %s | %s |" % (
            prog, who, len(r["tuning"]), span(r["tuning"]), span(r["host"]),
            ", ".join(map(str, sorted(r["htod"]))), count_span(r["dtoh"]), ", ".join(map(str, sorted(r["guard"])))))
    if not rows:
        print("(no tune events)")
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
