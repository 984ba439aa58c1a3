#!/usr/bin/env python3
"""tuning_cost.py LOG.jsonl...: what each key's tuning cost against its floor.

One row per tune event: the tuning time (duration_ms), the module load and clock
warm-up (reported apart: once per context / skipped when the GPU is busy), the floor
(the timed runs' kernel times plus warm-up runs at the median), the ratio of the rest
to the floor, whether it meets the target `rest <= 1.5 * floor + 20 ms`, and the phases.

    python3 tools/bench/tuning_cost.py logs/*.tune.jsonl
"""
import json
import sys

PHASES = ["snapshot", "verification", "warmup_runs", "timed_runs", "restores", "put_back", "other"]


def rows(paths):
    for p in paths:
        prog = p.rsplit("/", 1)[-1].split(".")[0]
        for line in open(p):
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("event") == "tune" and "phases_ms" in e:
                yield prog, e


def main(paths):
    print("| program | kernel | key | tuning ms | load ms | clock ms | floor ms | rest / floor "
          "| target | " + " | ".join(PHASES) + " |")
    print("| --- " * (9 + len(PHASES)) + "|")
    met = total = 0
    for prog, e in rows(paths):
        ph = e["phases_ms"]
        rest = e["duration_ms"] - ph["module_load"] - ph["clock_warmup"]
        floor = e.get("floor_ms", 0.0)
        ok = rest <= 1.5 * floor + 20
        total += 1
        met += ok
        ratio = "%.2f" % (rest / floor) if floor > 0 else "-"
        name = e["name"].split("(")[0][:28]
        key = e["key"][:40]
        note = e.get("untuned") and " (untuned)" or ""
        print("| %s | %s | %s%s | %.1f | %.1f | %.1f | %.1f | %s | %s | %s |" % (
            prog, name, key, note, e["duration_ms"], ph["module_load"], ph["clock_warmup"], floor,
            ratio, "yes" if ok else "**no**", " | ".join("%.1f" % ph[k] for k in PHASES)))
    print()
    print("%d of %d keys within 1.5 x floor + 20 ms" % (met, total))
    return 0 if met == total else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
