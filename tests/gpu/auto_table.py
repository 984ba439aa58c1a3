#!/usr/bin/env python3
"""auto_table.py WORK -- the Markdown table of tests/gpu/auto.sh (issue 28, item 7).

Reads the work folder auto.sh filled (programs.tsv, env.txt, logs/<prog>.<run>.*,
out/<prog>.<run>.bin; runs base, hand, auto, autotol) with summarize.py's readers.
Standard library only. Exit 0 when every row meets its target, 1 otherwise.

Speed-up of a run for a kernel: over its benchmarked tune events (keys), the sum of the
own config's medians / the sum of the winners' medians (a winner that is the program's own
config counts its own median; a key where nothing was timed, every candidate rejected,
counts as kept: 1.00). That is run.sh's speed-up (own median_ms / winner median_ms) for a
program with one key, as every C program of the suite has.
"""
import os
import sys
from collections import OrderedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize import Run, compare, esc, fmt_ms  # noqa: E402

RATIO = 0.9  # auto must reach this fraction of the hand speed-up


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def own_won(ev):
    """True when the tune event's winner is the program's own config."""
    own, win = ev.get("own") or {}, ev.get("winner") or {}
    idx = win.get("index")
    if idx is not None:
        return idx == -1
    return not win or win.get("config") == own.get("config")


def med(c):
    return num(c.get("median_ms", c.get("mean_ms")))


def idiom_of(ev):
    """The winner's idiom under auto, read defensively: "own", the name, or "?"."""
    if own_won(ev):
        return "own"
    for src in ((ev.get("winner") or {}).get("auto"), ev.get("auto")):
        if isinstance(src, dict) and src.get("idiom"):
            return str(src["idiom"])
    w = ev.get("winner") or {}
    if w.get("idiom"):
        return str(w["idiom"])
    return "?"


class KernelRun:
    """What one run's tune events say about one kernel."""

    def __init__(self, events):
        self.events = events
        self.keys = len(events)
        self.notes = []
        own_sum = win_sum = 0.0
        timed = 0
        self.kept = all(own_won(e) for e in events) if events else None
        for e in events:
            for k in ("untuned", "error"):
                if e.get(k):
                    self.notes.append(f"{k}: {e.get(k)}")
            o = med(e.get("own") or {})
            w = o if own_won(e) else med(e.get("winner") or {})
            if o is None or w is None or w <= 0:
                continue
            own_sum += o
            win_sum += w
            timed += 1
        if timed:
            self.speedup = own_sum / win_sum
        elif events and self.kept:
            self.speedup = 1.0  # nothing timed (every candidate rejected, or untuned): kept
        else:
            self.speedup = None
        self.idioms = sorted({idiom_of(e) for e in events})
        self.winners = ["own config" if own_won(e) else (e.get("winner") or {}).get("config") or "?"
                        for e in events]


def tune_events(run):
    """{kernel name: [benchmarked tune events]} of a run, in log order."""
    out = OrderedDict()
    for e in run.log.tunes:
        if e.get("benchmarked") is False or e.get("from_cache"):
            continue
        name = str(e.get("name") or e.get("kernel") or "?").split("(")[0]
        out.setdefault(name, []).append(e)
    return out


def fmt_x(v):
    return "—" if v is None else f"{v:.2f}×"


def outputs(base, run, how):
    if not run.ran and not run.note:
        return False, "not run"
    ok, text = compare(base, run, how)
    f = run.failure()
    if f and not base.failure():
        text += f": {f}"
    return ok, text


def main(work):
    progs = []
    with open(os.path.join(work, "programs.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, kind, policy, how, how_tol, tol = (line.rstrip("\n").split("\t") + ["-"] * 6)[:6]
                progs.append((name, kind, policy, how, how_tol, tol))
    env = open(os.path.join(work, "env.txt"), encoding="utf-8").read() if os.path.exists(
        os.path.join(work, "env.txt")) else ""
    L = []
    w = L.append
    w("# Tuning with no policy against the hand-written policies")
    w("")
    for l in env.strip().splitlines():
        w(f"- {l}")
    w("")
    w("Each program runs without the shim, with its hand-written policy (*hand*: `XMATUNE_POLICY`), "
      "and with no policy (*auto*: `XMATUNE_AUTO=1`; *auto, tol X*: with `XMATUNE_AUTO_TOLERANCE=X` "
      "too), each with a fresh cache. *Speed-up*: the own config's median / the winner's, from the "
      "tune events (summed over a kernel's keys). *auto / hand*: target ≥ 0.9, or both keep the "
      "program's own config. *Idiom*: the auto winner's (`\"auto\": {\"idiom\"}` of the tune event; "
      "`own`: the program's config kept; `?`: not in the event). *Program time*: the program's own "
      "median per launch (`TIME_MS`) without the shim → hand → auto.")
    w("")
    w("| program | run | kernel | keys | outputs vs no shim | hand speed-up | auto speed-up | auto / hand "
      "| auto winner (idiom) | program time | verdict | note |")
    w("| --- | --- | --- | ---: | --- | ---: | ---: | ---: | --- | --- | --- | --- |")
    all_ok = True
    summary = []
    for name, kind, policy, how, how_tol, tol in progs:
        base = Run(work, name, "base")
        hand = Run(work, name, "hand") if policy != "-" else None
        hand_k = tune_events(hand) if hand else OrderedDict()
        runs = [("auto", "auto", how)]
        if tol != "-":
            runs.append(("autotol", f"auto, tol {tol}", how_tol))
        if base.failure() and base.failure().startswith("skipped"):
            w(f"| {esc(name)} | — | — | — | — | — | — | — | — | — | skipped | {esc(base.failure())} |")
            continue
        hand_ok, hand_text = outputs(base, hand, how_tol) if hand else (True, None)
        for mode, label, cmp_how in runs:
            r = Run(work, name, mode)
            ok, text = outputs(base, r, cmp_how)
            out_text = text if hand is None else f"hand: {hand_text}; {label}: {text}"
            auto_k = tune_events(r)
            names = list(OrderedDict.fromkeys(list(hand_k) + list(auto_k)))
            ptime = " → ".join(fmt_ms(x.time_ms) if x and x.time_ms else "—" for x in (base, hand, r))
            if hand is None:  # Triton, PyTorch: outputs only; auto's keys in a summary
                every = KernelRun([e for n in auto_k for e in auto_k[n]])
                changed = sum(1 for e in every.events if not own_won(e))
                idioms = ", ".join(i for i in every.idioms if i != "own") or "—"
                good = ok
                all_ok = all_ok and good
                w(f"| {esc(name)} | {label} | {len(auto_k)} kernels | {every.keys} | {esc(out_text)} | — "
                  f"| {fmt_x(every.speedup)} (all keys) | — | {changed} of {every.keys} keys changed ({esc(idioms)}) "
                  f"| {ptime} | {'ok' if good else '**no**'} | {esc('; '.join(sorted(set(every.notes))[:3]))} |")
                summary.append((name, label, good))
                continue
            if not names:
                names = ["(no tune event)"]
            for kn in names:
                hk = KernelRun(hand_k.get(kn, []))
                ak = KernelRun(auto_k.get(kn, []))
                ratio = None
                if hk.speedup and ak.speedup:
                    ratio = ak.speedup / hk.speedup
                kept = bool(hk.kept) and bool(ak.kept)
                notes = [f"hand {n}" for n in hk.notes] + [f"auto {n}" for n in ak.notes]
                if base.failure():
                    notes.append(f"without the shim: {base.failure()}")
                if not ak.events:
                    notes.append(f"no tune event in the {label} run" + (f" ({r.failure()})" if r.failure() else ""))
                # a program with a tolerance run (row_softmax, atomic_rowsum): in the plain auto
                # run no tolerance is allowed, so candidates that differ by rounding are
                # rejected and the own config may stay; its target is its outputs, and the
                # speed-up target is the tolerance run's (the next row)
                bitwise_only = mode == "auto" and tol != "-"
                if bitwise_only:
                    good = ok
                    verdict = "ok (bitwise; target: next row)" if good else "**no**"
                else:
                    good = hand_ok and ok and (kept or (ratio is not None and ratio >= RATIO))
                    verdict = "ok" + (" (own kept)" if kept else "") if good else "**no**"
                all_ok = all_ok and good
                winner = "; ".join(wn if idm == "own" else f"{wn} ({idm})"
                                   for wn, idm in zip(ak.winners, [idiom_of(e) for e in ak.events]))
                w(f"| {esc(name)} | {label} | {esc(kn)} | {hk.keys} / {ak.keys} | {esc(out_text)} "
                  f"| {fmt_x(hk.speedup)} | {fmt_x(ak.speedup)} | {'—' if ratio is None else f'{ratio:.2f}'} "
                  f"| {esc(winner or '—')} | {ptime} | {verdict} | {esc('; '.join(notes[:4]))} |")
                summary.append((name, label, good))
    w("")
    bad = [f"{n} ({l})" for n, l, g in summary if not g]
    w("*keys*: hand / auto tune events of the kernel. † compared within the stated tolerance (float "
      "atomics vary run to run; the tolerance the policy or `XMATUNE_AUTO_TOLERANCE` allowed).")
    w("")
    w("Overall: "
      + ("every row meets its target." if all_ok else "NOT MET: " + ", ".join(bad) + "."))
    print("\n".join(L))
    return 0 if all_ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
