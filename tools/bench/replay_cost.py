#!/usr/bin/env python3
"""replay_cost.py -- what later changes to the session would have saved in a recorded
racing run: an estimate from recorded timings, never a measurement.

    python3 tools/bench/replay_cost.py [EVENTS]

EVENTS (default tools/bench/data/racing-e5d452b.tune.jsonl): the tune events of one
tests/gpu/racing.sh run on the H200 (3 fresh processes per program), in order. For each
key, m = (tuning - 20 ms) / full_floor_ms as racing_table.py computes it (tuning: duration
less the clock warm-up and the module load), then m after taking away, from each event,
the GPU time of the runs each change saves, at the medians recorded for the configs that
would not have run:

  early   21fdf7c  racing drops, after rounds 1 and 2, a candidate whose fastest run is
                   slower than 1.5 x the smallest of the raced candidates' slowest runs
                   (race.h, XMT_RACE_EARLY): the timed runs it did not need;
  repeat  cc1aed8  outputs updated in place: the own config's determinism run only when
                   every candidate was rejected (one own run where one passed);
  check   4734461  the in-place check only when a candidate's run from outputs all
                   poisoned differs: one own run where outputs are written whole and no
                   candidate was rejected; else one more run of the first candidate that
                   differs (it runs again after the check): the first verified where
                   outputs are updated in place, the first rejected where not (a rejected
                   candidate was never timed: its run counts as 0 here);
  warm    14b6eb2  no warm-up run of the own config after the clock warm-up;
  lead    14b6eb2  round 1's lead-in is the first candidate, not the own config;
  self    ecd4e89  a cost, not a saving (negative): a candidate whose median is below
                   XMATUNE_SELF_LEAD_US (50 us) runs once more, untimed, before each timed
                   run after its first: (timed runs - 1) x its median, an upper bound
                   (a round's first runner has its lead-in already, not counted again).

What it leaves out: second-order effects (a candidate dropped earlier changes the noise
estimate and the later eliminations), the own runs of the in-place check at the idle
clock (slower than the median used here: the estimate is low there), what the in-place
keys pay besides the candidate's second run (one more comparison and change detection:
the estimate is high there), and anything the GPU kernels' own changes save (the mask
counting of 92abe58). Prints a Markdown table.
"""
import json
import os
import statistics
import sys

EARLY = 0.5  # race.h XMT_RACE_EARLY
SELF_LEAD_MS = 0.05  # XMATUNE_SELF_LEAD_US's default
BOUND_MS = 20.0  # the 20 ms of the bound: m = (tuning - 20 ms) / full floor


def timed(c):
    return c.get("times_ms") or []


def med(c):
    return c.get("median_ms") or (statistics.median(timed(c)) if timed(c) else 0.0)


def early_saved(e):
    """GPU ms of the timed runs the early rule would not have made."""
    cands = [e["own"]] + [c for c in e["candidates"] if c.get("status") == "ok"]
    alive = [c for c in cands if timed(c)]
    dropped, saved = set(), 0.0
    for r in (1, 2):
        live = [c for c in alive if id(c) not in dropped and len(timed(c)) >= r]
        if not live:
            break
        bound = min(max(timed(c)[:r]) for c in live)
        for c in live:
            if min(timed(c)[:r]) > (1 + EARLY) * bound:
                dropped.add(id(c))
                saved += sum(timed(c)[r:])
    return saved


def first_differing(e, pure):
    """The first candidate whose run from outputs all poisoned differs: where outputs are
    updated in place, the first verified; where not, the first rejected (None: none)."""
    want = ("rejected",) if pure else ("ok", "rejected")
    return next((c for c in e["candidates"] if c.get("status") in want), None)


def savings(e):
    own = med(e["own"]) if timed(e["own"]) else 0.0
    pure = (e.get("protect") or {}).get("in_place_bytes", 0) == 0
    first = first_differing(e, pure)
    passed = any(c.get("status") == "ok" for c in e["candidates"])
    ran_clock = (e.get("clock_warmup") or {}).get("ran", False)
    s = {"early": early_saved(e)}
    s["repeat"] = own if (not pure and passed) else 0.0
    if first is None:
        s["check"] = own if pure else 0.0
    else:
        s["check"] = -(med(first) if timed(first) else 0.0)
    s["warm"] = own if (ran_clock and e.get("race", {}).get("on")) else 0.0
    runners = [c for c in e["candidates"] if c.get("status") == "ok" and timed(c)]
    s["lead"] = own - med(runners[0]) if (runners and timed(e["own"])) else 0.0
    s["self"] = -sum((len(timed(c)) - 1) * med(c) for c in [e["own"]] + runners
                     if timed(c) and med(c) < SELF_LEAD_MS)
    return s


def ratio(tuning, full):
    """m; with no full floor (every candidate rejected: nothing timed), 0 within the 20 ms
    and infinite beyond, as racing_table.py counts it."""
    if full > 0:
        return (tuning - BOUND_MS) / full
    return 0.0 if tuning <= BOUND_MS else float("inf")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "data", "racing-e5d452b.tune.jsonl")
    keys = {}
    for line in open(path):
        e = json.loads(line)
        if e.get("event") != "tune":
            continue
        ph = e["phases_ms"]
        tuning = e["duration_ms"] - ph.get("clock_warmup", 0) - ph.get("module_load", 0)
        name = e["name"].split("(")[0]
        keys.setdefault((name, e["key"]), []).append((tuning, e.get("full_floor_ms", 0), savings(e)))
    steps = ["early", "repeat", "check", "warm", "lead", "self"]
    print("| kernel | key | m | " + " | ".join("%s ms" % s for s in steps) +
          " | m, earlier two | m, all five | m, all six |")
    print("| --- | --- | ---: | " + " | ".join("---:" for _ in steps) + " | ---: | ---: | ---: |")
    ms = {"m": [], "two": [], "all": [], "six": []}
    for (name, key), evs in keys.items():
        m = statistics.median(ratio(t, f) for t, f, _ in evs)
        two = statistics.median(ratio(t - s["early"] - s["repeat"], f) for t, f, s in evs)
        allm = statistics.median(ratio(t - sum(s[k] for k in steps[:5]), f) for t, f, s in evs)
        six = statistics.median(ratio(t - sum(s.values()), f) for t, f, s in evs)
        per = [statistics.median(s[k] for _, _, s in evs) for k in steps]
        ms["m"].append(m)
        ms["two"].append(two)
        ms["all"].append(allm)
        ms["six"].append(six)
        print("| %s | %s | %.2f | %s | %.2f | %.2f | %.2f |" %
              (name, key, m, " | ".join("%.2f" % p for p in per), two, allm, six))
    print("\nmedian m over the keys: %.2f at the run, %.2f with early and repeat, %.2f with all "
          "five, %.2f with the self lead-in's cost too (an estimate from recorded timings, not a "
          "measurement)" % tuple(statistics.median(ms[k]) for k in ("m", "two", "all", "six")))


if __name__ == "__main__":
    main()
