#!/usr/bin/env python3
"""agree_record.py WORK OUT.jsonl: agreement.sh's fresh processes (part 1: WORK/fresh/<n>/,
one process each with its own cache) as test_race's recorded data (tests/unit/data/agree).
One line per tune event that benchmarked: the process, program and key, the statistic,
every candidate's config, status and timed runs (the own config's too), the winner's config,
the tie band and the tie limit; nothing else (grids, reasons, phases) so that the files stay
small. Times are rounded to 6 decimals of a ms (the events' float32 values need no more).
Reads the logs with summarize.py's Log. Standard library only.

    python3 tests/gpu/agree_record.py /tmp/ag/work tests/unit/data/agree/h200-DATE-HHMM.jsonl
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize import Log  # noqa: E402


def timings(c):
    d = {"config": c["config"], "status": c.get("status")}
    if "times_ms" in c:
        d["times_ms"] = [round(t, 6) for t in c["times_ms"]]
    return d


def records(work):
    procs = glob.glob(os.path.join(work, "fresh", "*"))
    for n, p in sorted((int(os.path.basename(p)), p) for p in procs):
        for f in sorted(glob.glob(os.path.join(p, "*.jsonl"))):
            prog = os.path.basename(f)[: -len(".jsonl")]
            if prog == "cache":
                continue
            for e in Log(f).tunes:
                if not e.get("benchmarked"):
                    continue
                yield {
                    "event": "tune",
                    "process": n,
                    "program": prog,
                    "key": e["key"],
                    "statistic": e["statistic"],
                    "band": "medians",
                    "own": timings(e["own"]),
                    "candidates": [timings(c) for c in e["candidates"]],
                    "winner": e["winner"]["config"],
                    "tie_band": e["tie_band"],
                    "tie_limit": e["race"]["tie_limit"],
                }

def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    n = 0
    with open(sys.argv[2], "w") as out:
        for r in records(sys.argv[1]):
            out.write(json.dumps(r) + "\n")
            n += 1
    print(f"agree_record.py: {n} tune events to {sys.argv[2]}")
    return 0 if n else 1


if __name__ == "__main__":
    sys.exit(main())
