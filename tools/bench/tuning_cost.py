#!/usr/bin/env python3
"""tuning_cost.py LOG.jsonl...: what each key's tuning cost against its floor.

One row per tune event: the tuning time (duration_ms), the module load and clock
warm-up (reported apart: once per context / skipped when the GPU is busy), the floor
(the timed runs' kernel times plus warm-up runs at the median), the ratio of the rest
to the floor, whether it meets the target `rest <= 1.5 * floor + 20 ms` (issue 9), and the
phases; then the full floor (`full_floor_ms`: what timing every candidate in full would
have cost; racing makes the floor smaller than it) with issue 26's targets: the rest at
most 0.5 x full floor + 20 ms in the median key, never above 1.0 x full floor + 20 ms.

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
          "| target | full floor ms | rest / full | " + " | ".join(PHASES) + " |")
    print("| --- " * (11 + len(PHASES)) + "|")
    met = total = 0
    over_full, excess = 0, []
    for prog, e in rows(paths):
        ph = e["phases_ms"]
        rest = e["duration_ms"] - ph["module_load"] - ph["clock_warmup"]
        floor = e.get("floor_ms", 0.0)
        ok = rest <= 1.5 * floor + 20
        total += 1
        met += ok
        ratio = "%.2f" % (rest / floor) if floor > 0 else "-"
        full = e.get("full_floor_ms", floor)  # logs before racing: the floor was full
        if full > 0:
            excess.append((rest - 20) / full)  # <= x: rest within x * full + 20 ms
            over_full += rest > full + 20
        fratio = "%.2f" % (rest / full) if full > 0 else "-"
        name = e["name"].split("(")[0][:28]
        key = e["key"][:40]
        note = e.get("untuned") and " (untuned)" or ""
        print("| %s | %s | %s%s | %.1f | %.1f | %.1f | %.1f | %s | %s | %.1f | %s | %s |" % (
            prog, name, key, note, e["duration_ms"], ph["module_load"], ph["clock_warmup"], floor,
            ratio, "yes" if ok else "**no**", full, fratio,
            " | ".join("%.1f" % ph[k] for k in PHASES)))
    print()
    print("%d of %d keys within 1.5 x floor + 20 ms" % (met, total))
    if excess:
        excess.sort()
        med = excess[len(excess) // 2] if len(excess) % 2 else \
            (excess[len(excess) // 2 - 1] + excess[len(excess) // 2]) / 2
        print("full floor: the median key within %.2f x full floor + 20 ms (target 0.5), %d of %d "
              "above 1.0 x full floor + 20 ms (target 0)" % (med, over_full, len(excess)))
    return 0 if met == total else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
