#!/usr/bin/env python3
"""racing_table.py WORK -- the Markdown tables of tests/gpu/racing.sh (issue 26, item 1).

Reads the work folder racing.sh filled (programs.tsv, env.txt, logs/<prog>.r<N>.*,
out/, quality/) with summarize.py's readers. Standard library only; every field of the
tune event is read defensively (a shim without racing has no full_floor_ms: it is then
estimated from the candidates' medians, and marked so). Exit 0 when every target holds.

Per tune event: tuning = duration_ms - phases_ms.clock_warmup - phases_ms.module_load;
full = full_floor_ms (or its estimate: over the program's own config and every candidate
with a median, (warmup + iterations) x median); m = (tuning - 20 ms) / full, the share of
the full floor that tuning takes beyond 20 ms (0 when full is 0 and tuning <= 20 ms).
Targets: the median key's m <= 0.5 and every event's m <= 1.0; choice quality median
>= 0.99, none below 0.95. Where racing.sh sampled the GPU's SM clock (clocks.csv,
timeline.tsv), a table gives the clock around each program's slowest round; where the
tune events have driver_calls (sessions in the trial helper), another splits each
program's slowest and fastest round by the driver calls it waited in.
"""
import json
import os
import statistics
import sys
from collections import OrderedDict, defaultdict
from datetime import datetime

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize import Log, Run, compare, esc, fmt_ms  # noqa: E402

SLACK_MS = 20.0
MEDIAN_TARGET, MAX_TARGET = 0.5, 1.0
Q_MEDIAN, Q_LOW = 0.99, 0.95


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def med(c):
    return num((c or {}).get("median_ms", (c or {}).get("mean_ms")))


def full_floor(ev):
    """(ms, estimated?) or (None, True) when nothing says."""
    v = num(ev.get("full_floor_ms"))
    if v is not None:
        return v, False
    runs = (num(ev.get("warmup")) or 0) + (num(ev.get("iterations")) or 0)
    if runs <= 0:
        return None, True
    meds = [med(ev.get("own"))] + [med(c) for c in ev.get("candidates") or []]
    return sum(runs * m for m in meds if m is not None), True


def eliminated(c):
    return c.get("status") == "eliminated" or bool(c.get("eliminated"))


class Sample:
    """One tune event's figures."""

    def __init__(self, ev):
        ph = ev.get("phases_ms") or {}
        dur = num(ev.get("duration_ms"))
        self.tuning = None if dur is None else dur - (num(ph.get("clock_warmup")) or 0) - (
            num(ph.get("module_load")) or 0)
        self.floor = num(ev.get("floor_ms"))
        self.full, self.est = full_floor(ev)
        self.m = None
        if self.tuning is not None and self.full is not None:
            if self.full > 0:
                self.m = (self.tuning - SLACK_MS) / self.full
            else:
                self.m = 0.0 if self.tuning <= SLACK_MS else float("inf")
        st = defaultdict(int)
        for c in ev.get("candidates") or []:
            st["eliminated" if eliminated(c) else str(c.get("status", "?"))] += 1
        self.status = st
        w = ev.get("winner") or {}
        self.winner = "own" if w.get("index") == -1 else str(w.get("config") or "?")
        self.notes = [f"{k}: {ev[k]}" for k in ("untuned", "error") if ev.get(k)]
        race = ev.get("race") or {}
        self.edge = (int(race.get("edge_rounds") or 0), int(race.get("edge_left") or 0))


def edge_note(ss):
    """How often the edge re-timed a key (docs/tuning.md, Racing, "The edge"): in how many
    of its events, how many rounds, and whether any stayed unsettled; "" when never."""
    er = [s.edge for s in ss if s.edge[0] > 0]
    if not er:
        return ""
    lo, hi = min(r for r, _ in er), max(r for r, _ in er)
    left = sum(1 for _, l in er if l > 0)
    return (f"the edge in {len(er)} of {len(ss)} events: {lo}{'' if lo == hi else f'–{hi}'} rounds"
            + (f", {left} unsettled" if left else ""))


def fmt_m(v):
    if v is None:
        return "—"
    return "inf" if v == float("inf") else f"{v:.2f}"


def median_of(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def keyed_samples(logs):
    """{(kernel, key): [Sample]} over the benchmarked tune events of some logs."""
    out = OrderedDict()
    for lg in logs:
        for ev in lg.tunes:
            if ev.get("benchmarked") is False or ev.get("from_cache"):
                continue
            k = (str(ev.get("name") or ev.get("kernel") or "?").split("(")[0], str(ev.get("key")))
            out.setdefault(k, []).append(Sample(ev))
    return out


def read_clocks(work):
    """(clock samples [(epoch s, SM MHz)], {(program, run): (start, end)}) from racing.sh's
    clocks.csv (nvidia-smi's timestamp, local time, and clocks.sm) and timeline.tsv; empty
    where a file is missing (no nvidia-smi) or a line does not parse."""
    samples, spans = [], {}
    try:
        with open(os.path.join(work, "clocks.csv"), encoding="utf-8") as f:
            for line in f:
                ts, _, mhz = line.strip().partition(",")
                try:
                    t = datetime.strptime(ts.strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()
                    samples.append((t, float(mhz)))
                except ValueError:
                    continue
        with open(os.path.join(work, "timeline.tsv"), encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 4:
                    try:
                        spans[(parts[0], parts[1])] = (float(parts[2]), float(parts[3]))
                    except ValueError:
                        continue
    except OSError:
        pass
    samples.sort()
    return samples, spans


def mhz(v):
    return "—" if v is None else f"{v:.0f}"


def round_extremes(runs):
    """(slowest, fastest): ("r<N>", tuning, tune event) of the rounds (runs[N - 1]) whose
    tune event took longest and shortest; (None, None) when none has one."""
    seen = []
    for i, r in enumerate(runs, 1):
        for ev in [] if r.note else r.log.tunes:
            t = Sample(ev).tuning
            if t is not None:
                seen.append((f"r{i}", t, ev))
    if not seen:
        return None, None
    return max(seen, key=lambda x: x[1]), min(seen, key=lambda x: x[1])


# The trial helper's driver calls (the tune event's driver_calls, shim/session/drvtime.h) by kind;
# polled_waits is not an entry point but the session's waits for its runs by polling, whose
# polls (POLLS) are counted under their own names too: left out where polled_waits is there.
DRIVER_KINDS = (
    ("waits", ("cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize", "polled_waits")),
    ("allocations", ("cuMemAlloc", "cuMemFree")),
    ("copies, fills", ("cuMemcpyDtoDAsync", "cuMemcpyDtoHAsync", "cuMemcpyDtoH", "cuMemcpyHtoD",
                       "cuMemsetD8Async")),
    ("launches", ("cuLaunchKernel",)),
)

POLLS = ("cuStreamQuery", "cuEventQuery")


def driver_split(ev):
    """[ms per DRIVER_KINDS kind..., other driver calls, the rest (host)] of a tune event's
    duration_ms, from its driver_calls; None when it has none."""
    calls = ev.get("driver_calls")
    dur = num(ev.get("duration_ms"))
    if not isinstance(calls, dict) or dur is None:
        return None
    ms = {k: num((v or {}).get("ms")) or 0.0 for k, v in calls.items()}
    if "polled_waits" in ms:
        for k in POLLS:
            ms.pop(k, None)
    out, named = [], set()
    for _, names in DRIVER_KINDS:
        out.append(sum(ms.get(n, 0.0) for n in names))
        named.update(names)
    out.append(sum(v for k, v in ms.items() if k not in named))
    out.append(dur - sum(out))
    return out


def driver_table(extremes, w):
    """Each program's slowest and fastest round ({program: (slowest, fastest)}), its
    duration split by the helper's driver calls: which part grows in a slow round."""
    rows = []
    for name, pair in extremes.items():
        for label, x in zip(("slowest", "fastest"), pair):
            split = driver_split(x[2]) if x else None
            if split is None or (label == "fastest" and x is pair[0]):
                continue
            rows.append(f"| {esc(name)} | {label} ({x[0]}) | {fmt_ms(num(x[2].get('duration_ms')))} | "
                        + " | ".join(fmt_ms(v) for v in split) + " |")
    if not rows:
        return
    w("")
    w("Where each program's slowest and fastest round spent its `duration_ms` (the trial helper's "
      "driver calls, the tune event's `driver_calls`): *waits* = the synchronizations and the "
      "polled waits for runs (the GPU's own time shows here), *host* = what none of them took.")
    w("")
    w("| program | round | duration | " + " | ".join(k for k, _ in DRIVER_KINDS) + " | other driver | host |")
    w("| --- | --- | ---: | " + " | ".join("---:" for _ in DRIVER_KINDS) + " | ---: | ---: |")
    for row in rows:
        w(row)


def clock_ms(work):
    """The clock's sampling interval racing.sh used (env.txt's settings line; 50 before it
    said)."""
    try:
        with open(os.path.join(work, "env.txt"), encoding="utf-8") as f:
            for line in f:
                for word in line.split():
                    if word.startswith("CLOCK_MS="):
                        return word.split("=", 1)[1]
    except OSError:
        pass
    return "50"


def clock_table(work, slowest, w):
    """Each program's slowest round ({program: (run, tuning, event)}) with the SM clock around
    it: the last sample before the process started, and the lowest and the median while
    it ran."""
    samples, spans = read_clocks(work)
    rows = []
    for name, (mode, tuning, _) in slowest.items() if samples else ():
        if (name, mode) not in spans:
            continue
        t0, t1 = spans[(name, mode)]
        before = [m for t, m in samples if t <= t0]
        during = [m for t, m in samples if t0 <= t <= t1]
        rows.append(f"| {esc(name)} | {mode} | {fmt_ms(tuning)} | {mhz(before[-1] if before else None)} "
                    f"| {mhz(min(during) if during else None)} "
                    f"| {mhz(statistics.median(during) if during else None)} |")
    if not rows:
        return
    w("")
    w(f"The GPU's SM clock (MHz, `nvidia-smi` every {clock_ms(work)} ms) around each program's slowest round: "
      "*before* is the last sample before its process started; *lowest* and *median* are "
      "over the samples while it ran.")
    w("")
    w("| program | round | tuning | before | lowest | median |")
    w("| --- | --- | ---: | ---: | ---: | ---: |")
    for row in rows:
        w(row)


def main(work):
    progs = []
    with open(os.path.join(work, "programs.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, how, rounds = (line.rstrip("\n").split("\t") + ["exact", "1"])[:3]
                progs.append((name, how, int(rounds)))
    envp = os.path.join(work, "env.txt")
    env = open(envp, encoding="utf-8").read() if os.path.exists(envp) else ""
    L = []
    w = L.append
    w("# Tuning against its floor (racing), and choice quality")
    w("")
    for l in env.strip().splitlines():
        w(f"- {l}")
    w("")
    w("Each program tuned with its hand policy in fresh processes (a fresh cache each). Per key, "
      "medians over the rounds: *tuning* = `duration_ms` − `phases_ms.clock_warmup` − "
      "`phases_ms.module_load`; *full floor* = `full_floor_ms` (est.: from the candidates' medians × "
      "(warm-up + timed runs) when the event has none); *m* = (tuning − 20 ms) / full floor "
      "(target: median key ≤ 0.5, every event ≤ 1.0). *Candidates*: by status over the rounds.")
    w("")
    w("| program | kernel | key | rounds | tuning | floor | full floor | bound 0.5× + 20 ms | m | m, worst round "
      "| candidates | winners | outputs | note |")
    w("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- |")
    key_m, all_m, all_ok = [], [], True
    extremes = {}  # program: its slowest and fastest round, for the clock and driver tables
    for name, how, rounds in progs:
        base = Run(work, name, "base")
        runs = [Run(work, name, f"r{i}") for i in range(1, rounds + 1)]
        slow, fast = round_extremes(runs)
        if slow:
            extremes[name] = (slow, fast)
        outs, notes = [], []
        for r in runs:
            if r.note:
                notes.append(r.note.strip())
                continue
            ok, text = compare(base, r, how)
            outs.append(text)
            if not ok:
                all_ok = False
                if r.failure():
                    notes.append(r.failure())
        out_text = ", ".join(f"{n}× {t}" if n > 1 else t for t, n in
                             OrderedDict((t, outs.count(t)) for t in outs).items()) or "—"
        notes = list(OrderedDict.fromkeys(notes))  # the same failure each round: once
        ks = keyed_samples([r.log for r in runs if not r.note])
        if not ks:
            all_ok = False
            w(f"| {esc(name)} | — | — | 0 | — | — | — | — | — | — | — | — | {esc(out_text)} "
              f"| {esc('; '.join(notes) or 'no tune event')} |")
            continue
        for (kern, key), ss in ks.items():
            tuning = median_of([s.tuning for s in ss])
            floor = median_of([s.floor for s in ss])
            full = median_of([s.full for s in ss])
            est = any(s.est for s in ss)
            m = median_of([s.m for s in ss])
            worst = max((s.m for s in ss if s.m is not None), default=None)
            key_m.append(m)
            all_m.extend(s.m for s in ss if s.m is not None)
            st = defaultdict(int)
            for s in ss:
                for k, v in s.status.items():
                    st[k] += v
            cands = ", ".join(f"{v} {k}" for k, v in sorted(st.items())) or "—"
            wins = defaultdict(int)
            for s in ss:
                wins[s.winner] += 1
            win_text = ", ".join(f"{k} ×{v}" for k, v in sorted(wins.items(), key=lambda kv: -kv[1]))
            bound = None if full is None else 0.5 * full + SLACK_MS
            within = "" if bound is None or tuning is None else (" ✓" if tuning <= bound else " ✗")
            kn = sorted({n for s in ss for n in s.notes}) + [n for n in [edge_note(ss)] if n]
            w(f"| {esc(name)} | {esc(kern)} | {esc(key)} | {len(ss)} | {fmt_ms(tuning)} | {fmt_ms(floor)} "
              f"| {fmt_ms(full)}{' (est.)' if est else ''} | {fmt_ms(bound)}{within} | {fmt_m(m)} | {fmt_m(worst)} "
              f"| {esc(cands)} | {esc(win_text)} | {esc(out_text)} | {esc('; '.join(notes + kn))} |")
    w("")
    km = [v for v in key_m if v is not None]
    if km:
        med_m, max_m = statistics.median(km), max(all_m) if all_m else None
        ok = med_m <= MEDIAN_TARGET and max_m is not None and max_m <= MAX_TARGET
        all_ok = all_ok and ok
        w(f"Over {len(km)} keys: median m {fmt_m(med_m)} (target ≤ {MEDIAN_TARGET}), maximum over "
          f"{len(all_m)} events {fmt_m(max_m)} (target ≤ {MAX_TARGET}): {'met' if ok else 'NOT MET'}.")
    else:
        all_ok = False
        w("No key had the figures (no tune event with duration_ms).")
    clock_table(work, {n: x[0] for n, x in extremes.items()}, w)
    driver_table(extremes, w)
    w("")
    all_ok = quality(work, w) and all_ok
    w("")
    w(f"Overall: {'every target met' if all_ok else 'NOT every target met (see above)'}.")
    print("\n".join(L))
    return 0 if all_ok else 1


def quality(work, w):
    """The choice-quality section; True when its targets hold (or it was not asked for)."""
    qd = os.path.join(work, "quality")
    if not os.path.isdir(qd):
        w("Choice quality: not run (QUALITY=0).")
        return True
    w("## Choice quality (tools/bench/choice_quality.py --no-triton)")
    w("")
    note = os.path.join(qd, "note")
    if os.path.exists(note):
        w(f"Not run: {open(note).read().strip()}.")
        return False
    try:
        rows = json.load(open(os.path.join(qd, "choice_quality.json")))
    except (OSError, ValueError) as e:
        err = ""
        try:
            err = [l for l in open(os.path.join(qd, "stderr")).read().splitlines() if l.strip()][-1]
        except (OSError, IndexError):
            pass
        w(f"No result ({e}). {err}")
        return False
    qs = [(r.get("kernel", "?"), r.get("key"), num(r.get("quality"))) for r in rows if isinstance(r, dict)]
    got = [q for _, _, q in qs if q is not None]
    errs = [f"{n} {k}: {r.get('error')}" for r in rows if isinstance(r, dict) and r.get("error")
            for n, k in [(r.get("kernel", "?"), r.get("key"))]]
    if not got:
        w("No key measured. " + "; ".join(errs[:4]))
        return False
    med_q, low = statistics.median(got), min(got)
    ok = med_q >= Q_MEDIAN and low >= Q_LOW
    worst = sorted((q, n, k) for n, k, q in qs if q is not None)[:3]
    w(f"{len(got)} keys: median quality {med_q:.3f} (target ≥ {Q_MEDIAN}), lowest {low:.3f} (target ≥ {Q_LOW}): "
      f"{'met' if ok else 'NOT MET'}. Lowest: " + ", ".join(f"{n} {k} {q:.3f}" for q, n, k in worst)
      + (f". Not measured: {'; '.join(errs[:4])}" if errs else "") + ".")
    cq_log = os.path.join(qd, "cq.tune.jsonl")
    if os.path.exists(cq_log):
        ks = keyed_samples([Log(cq_log)])
        ms = [median_of([s.m for s in ss]) for ss in ks.values()]
        ms = [m for m in ms if m is not None]
        if ms:
            w("")
            w(f"Its own tune run (`quality/cq.tune.jsonl`), the same figures over its {len(ms)} keys: median m "
              f"{fmt_m(statistics.median(ms))}, maximum {fmt_m(max(ms))} (for information; the target is "
              "over the suite's keys above).")
    ways = os.path.join(qd, "timing_ways.md")
    if os.path.exists(ways):
        w("")
        w("### cq_axpb_inplace's configs timed six ways (tools/bench/cq/timing_ways.cu)")
        w("")
        w(open(ways).read().rstrip())
    return ok


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
