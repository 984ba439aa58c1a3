#!/usr/bin/env python3
"""summarize.py -- reads xmatune's JSON Lines logs and the GPU suite's run folder.

Standard library only (runs with any python3 >= 3.8, on the GPU machine or here).

    summarize.py log FILE...          one summary per log: processes, kernels, launches,
                                      launch shapes, tunings
    summarize.py launches FILE        the launches the shim saw: the sum of `launches`
                                      over the log's "exit" events (one line, a number,
                                      or "none" when the log has no exit event)
    summarize.py cmpf32 A B RTOL ATOL compares two files of float32 values within
                                      |a-b| <= ATOL + RTOL*|b|; exit 0 when they agree
    summarize.py report WORK          the suite's Markdown tables, from the folder
                                      run.sh filled (programs.tsv, logs/, out/, env.txt)

The log schema (docs/log.md; one JSON object per line):
  {"event":"start","pid":P,"mode":"discover|tune|replay","version":"..."}
  {"event":"kernel","kernel":M,"name":N,"device":D,"params":[{"offset":o,"size":s}],"policy":"file:line"|null}
  {"event":"kernel_summary","kernel":M,"name":N,"device":D,"launches":n,"rewritten":r,
   "passed_through":p,"path":"launch|launch_ex|cooperative|...",
   "shapes":[{"grid":[x,y,z],"block":[x,y,z],"shared":b,"count":n}]}
  {"event":"tune","kernel":M,"name":N,"device":D,"key":K,
   "own":{"config":C,"median_ms":t,"times_ms":[..]},
   "candidates":[{"config":C,"grid":[..],"block":[..],"shared":b,"status":"ok|skipped|rejected|fault",
                  "why":W,"median_ms":t,"times_ms":[..]}],
   "winner":{"config":C,"grid":[..],"block":[..],"shared":b,"median_ms":t},"tolerance":bool}
  {"event":"exit","launches":N,"rewritten":R,"kernels":K}
  {"event":"trial_helper","what":"started|restarted|gone|fallback","device":D,"pid":P,"ms":t,"why":W}
A candidate's status "fault" (issue 24: it faulted on the GPU or hung past the watchdog in
the trial helper; `why` names the driver's error) is counted like the others.
"""
import json
import os
import struct
import sys
from collections import OrderedDict, defaultdict


# --------------------------------------------------------------------------- logs

class Log:
    """Everything one JSON Lines file says (several processes may have appended)."""

    def __init__(self, path):
        self.path = path
        self.exists = os.path.exists(path)
        self.bad_lines = 0
        self.starts, self.kernels, self.summaries, self.tunes, self.exits = [], [], [], [], []
        self.graphs, self.graph_nodes, self.helpers = [], [], []
        self.other = defaultdict(int)
        if not self.exists:
            return
        with open(path, "r", encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    ev = json.loads(line)
                except ValueError:
                    self.bad_lines += 1
                    continue
                if not isinstance(ev, dict):
                    self.bad_lines += 1
                    continue
                kind = ev.get("event")
                bucket = {"start": self.starts, "kernel": self.kernels, "kernel_summary": self.summaries,
                          "tune": self.tunes, "exit": self.exits, "graphs": self.graphs,
                          "graph_node": self.graph_nodes, "trial_helper": self.helpers}.get(kind)
                if bucket is not None:
                    bucket.append(ev)
                else:
                    self.other[str(kind)] += 1

    def launches(self):
        """Sum of `launches` over exit events, or None when there is none."""
        if not self.exits:
            return None
        return sum(int(e.get("launches", 0) or 0) for e in self.exits)

    def rewritten(self):
        if not self.exits:
            return None
        return sum(int(e.get("rewritten", 0) or 0) for e in self.exits)

    def summary_launches(self):
        return sum(int(s.get("launches", 0) or 0) for s in self.summaries)


def kname(ev, width=70):
    n = ev.get("name") or ev.get("kernel") or "?"
    n = str(n).replace("|", "\\|")
    return n if len(n) <= width else n[: width - 1] + "…"


def fmt_ms(t):
    if t is None:
        return "—"
    try:
        t = float(t)
    except (TypeError, ValueError):
        return str(t)
    if t >= 100:
        return f"{t:.1f} ms"
    if t >= 1:
        return f"{t:.3f} ms"
    return f"{t * 1000:.1f} µs"


def dims(v):
    """[x, y, z] -> "(x,y,z)" without trailing 1s: (256), (32,8)."""
    try:
        v = [int(a) for a in v]
    except (TypeError, ValueError):
        return str(v)
    while len(v) > 1 and v[-1] == 1:
        v.pop()
    return "(" + ",".join(str(a) for a in v) + ")"


def fmt_cfg(c):
    """A config's label, plus its launch dimensions when the event gives them."""
    if isinstance(c, dict):
        s = c.get("config")
        if "grid" in c and "block" in c:
            d = f"grid={dims(c['grid'])} block={dims(c['block'])} shared={c.get('shared', 0)}"
            s = d if not s else (s if s.startswith("grid=") else f"{s}: {d}")
        return str(s or "?").replace("|", "\\|")
    return str(c)


def cmd_log(paths):
    for p in paths:
        lg = Log(p)
        print(f"== {p}")
        if not lg.exists:
            print("   (no such file)")
            continue
        modes = sorted({str(s.get("mode")) for s in lg.starts})
        print(f"   processes: {len(lg.starts)} (modes: {', '.join(modes) or '-'}), exits: {len(lg.exits)}, "
              f"bad lines: {lg.bad_lines}")
        print(f"   launches (exit events): {lg.launches()}, rewritten: {lg.rewritten()}, "
              f"kernels seen: {len(lg.kernels)}")
        for s in lg.summaries:
            print(f"   {kname(s)} dev {s.get('device')}: {s.get('launches')} launches, "
                  f"{s.get('rewritten')} rewritten, path {s.get('path')}")
            for sh in (s.get("shapes") or [])[:8]:  # null in tune mode
                print(f"      grid={sh.get('grid')} block={sh.get('block')} shared={sh.get('shared')} "
                      f"x{sh.get('count')}")
        for t in lg.tunes:
            own, win = t.get("own", {}) or {}, t.get("winner", {}) or {}
            c = t.get("candidates", []) or []
            st = defaultdict(int)
            for x in c:
                st[x.get("status", "?")] += 1
            print(f"   tune {kname(t)} key [{t.get('key')}]: own {fmt_cfg(own)} {fmt_ms(own.get('median_ms'))} -> "
                  f"{fmt_cfg(win)} {fmt_ms(win.get('median_ms'))}; candidates "
                  + ", ".join(f"{k} {v}" for k, v in sorted(st.items())))
            for x in c:
                if x.get("status") != "ok":
                    print(f"      {x.get('status')}: {x.get('config')}: {x.get('why')}")
            for k in ("untuned", "error"):
                if t.get(k):
                    print(f"      {k}: {t.get(k)}")
        for h in lg.helpers:
            print(f"   trial_helper {h.get('what')} device {h.get('device')} pid {h.get('pid')}"
                  + (f" {fmt_ms(h.get('ms'))}" if h.get("ms") is not None else "")
                  + (f": {h.get('why')}" if h.get("why") else ""))
        for k, v in lg.other.items():
            print(f"   other event {k}: {v}")
    return 0


# ------------------------------------------------------------------- comparisons

def cmp_exact(a, b):
    """(ok, text) for two output files compared byte for byte."""
    if not os.path.exists(a):
        return False, "no baseline output"
    if not os.path.exists(b):
        return False, "no output"
    sa, sb = os.path.getsize(a), os.path.getsize(b)
    if sa != sb:
        return False, f"no (sizes {sa} vs {sb})"
    if sa == 0:
        return False, "no (empty outputs)"
    with open(a, "rb") as fa, open(b, "rb") as fb:
        off = 0
        while True:
            ba, bb = fa.read(1 << 20), fb.read(1 << 20)
            if not ba:
                return True, "yes"
            if ba != bb:
                for i in range(len(ba)):
                    if ba[i] != bb[i]:
                        return False, f"no (first difference at byte {off + i})"
            off += len(ba)


def cmp_f32(a, b, rtol, atol):
    """(ok, text) for two files of float32 values compared within a tolerance."""
    if not os.path.exists(a):
        return False, "no baseline output"
    if not os.path.exists(b):
        return False, "no output"
    sa, sb = os.path.getsize(a), os.path.getsize(b)
    if sa != sb or sa % 4 or sa == 0:
        return False, f"no (sizes {sa} vs {sb})"
    n = sa // 4
    with open(a, "rb") as fa, open(b, "rb") as fb:
        va = struct.unpack(f"<{n}f", fa.read())
        vb = struct.unpack(f"<{n}f", fb.read())
    worst, bad, ident = 0.0, 0, 0
    for x, y in zip(va, vb):
        if x == y:
            ident += 1
            continue
        d = abs(x - y)
        if not (d <= atol + rtol * abs(y)):  # also catches NaN
            bad += 1
        if abs(y) > 0:
            worst = max(worst, d / abs(y))
    if bad:
        return False, f"no ({bad}/{n} values outside rtol={rtol:g} atol={atol:g})"
    return True, f"within tolerance† (max rel. diff {worst:.1e}, {ident}/{n} bitwise equal)"


def cmd_cmpf32(args):
    ok, text = cmp_f32(args[0], args[1], float(args[2]), float(args[3]))
    print(text)
    return 0 if ok else 1


# ------------------------------------------------------------------------ report

def read_text(path):
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def stdout_value(text, key):
    """The last `KEY value` line of a program's stdout, or None."""
    if not text:
        return None
    val = None
    for line in text.splitlines():
        parts = line.strip().split(None, 1)
        if len(parts) == 2 and parts[0] == key:
            val = parts[1].strip()
    return val


class Run:
    """One run of one program: rc, stdout, stderr, output file, log."""

    def __init__(self, work, name, mode):
        base = os.path.join(work, "logs", f"{name}.{mode}")
        rc = read_text(base + ".rc")
        self.ran = rc is not None
        try:
            self.rc = int(rc.strip()) if rc is not None else None
        except ValueError:
            self.rc = None
        self.stdout = read_text(base + ".stdout") or ""
        self.stderr = read_text(base + ".stderr") or ""
        self.out = os.path.join(work, "out", f"{name}.{mode}.bin")
        self.log = Log(os.path.join(work, "logs", f"{name}.{mode}.jsonl"))
        self.launches = stdout_value(self.stdout, "LAUNCHES")
        self.skip = stdout_value(self.stdout, "SKIP")
        self.time_ms = stdout_value(self.stdout, "TIME_MS")
        self.config = stdout_value(self.stdout, "CONFIG")
        self.note = read_text(base + ".note")
        self.limit = (read_text(base + ".limit") or "").strip() or None  # its timeout, s

    def failure(self):
        """None when the run succeeded, else a short reason."""
        if self.note:
            return self.note.strip()
        if not self.ran:
            return "not run"
        if self.rc == 77 or self.skip:
            return f"skipped: {self.skip or 'rc 77'}"
        if self.rc in (124, 137):
            return "timed out"
        if self.rc is None:
            return "no exit status"
        if self.rc != 0:
            tail = [l for l in self.stderr.strip().splitlines() if l.strip()][-1:]
            msg = f"exit {self.rc}" if self.rc < 128 else f"killed by signal {self.rc - 128}"
            if tail:  # the last stderr line, without the source path
                t = tail[0].strip()
                if t.startswith("/") and ".cu:" in t:
                    t = os.path.basename(t.split(" ", 1)[0]) + (" " + t.split(" ", 1)[1] if " " in t else "")
                msg += ": " + (t if len(t) <= 110 else t[:109] + "…")
            return msg
        return None


def compare(base, other, how):
    """(ok, text); the reasons for a failed run go to the note column, not here."""
    if base.failure():
        return False, "— (baseline failed)"
    if other.failure():
        return False, "no (run failed)"
    if how.startswith("f32tol"):
        _, rtol, atol = how.split(":")
        return cmp_f32(base.out, other.out, float(rtol), float(atol))
    return cmp_exact(base.out, other.out)


def esc(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def cmd_report(work):
    progs, expects = [], {}
    with open(os.path.join(work, "programs.tsv"), "r", encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, kind, how, policy, expect = (line.rstrip("\n").split("\t") + [""] * 5)[:5]
                progs.append((name, kind, how, policy))
                expects[name] = expect
    env = read_text(os.path.join(work, "env.txt")) or ""
    lines = []
    w = lines.append
    w("# xmatune GPU suite")
    w("")
    for l in env.strip().splitlines():
        w(f"- {l}")
    w("")
    w("## Interposition (discover mode)")
    w("")
    w("Each program runs without the shim, then with `LD_PRELOAD=libxmatune.so XMATUNE_MODE=discover`.")
    w("*Launches made*: the program's own count (`LAUNCHES`; PyTorch: kernel events of torch.profiler).")
    w("*Launches the shim saw*: the sum of `launches` over the log's `exit` events.")
    w("")
    w("| program | launches made | launches the shim saw | outputs identical | note |")
    w("| --- | ---: | ---: | --- | --- |")
    all_ok = True
    for name, kind, how, policy in progs:
        base, disc = Run(work, name, "base"), Run(work, name, "disc")
        made = base.launches if base.launches is not None else "—"
        notes = []
        bf = base.failure()
        if bf and bf.startswith("skipped"):
            w(f"| {esc(name)} | — | — | — | {esc(bf)} |")
            continue
        if bf:
            notes.append(f"baseline: {bf}")
        df = disc.failure()
        if df:
            notes.append(f"with shim: {df}")
        seen = disc.log.launches()
        if seen is None:
            seen_s = "no log" if not disc.log.exists else "no exit event"
        else:
            seen_s = str(seen)
        if disc.launches is not None and base.launches is not None and disc.launches != base.launches:
            notes.append(f"the run with the shim counted {disc.launches}")
        if disc.log.summaries and seen is not None and disc.log.summary_launches() != seen:
            notes.append(f"kernel_summary events add up to {disc.log.summary_launches()}")
        if len(disc.log.starts) > 1:
            notes.append(f"{len(disc.log.starts)} processes logged")
        if disc.log.bad_lines:
            notes.append(f"{disc.log.bad_lines} unparsable log lines")
        if "graph" in name:
            g, gk = stdout_value(base.stdout, "GRAPH_REPLAYS"), (stdout_value(base.stdout, "GRAPH_KERNELS")
                                                                or stdout_value(base.stdout, "GRAPH_KERNELS_EXECUTED"))
            if g:
                counted = sum(int(e.get("replays", 0) or 0) for e in disc.log.graphs)
                glaunch = sum(int(s.get("graph_launches", 0) or 0) for s in disc.log.summaries)
                notes.append(f"graph replays {counted} counted of {g}; kernel launches by replays "
                             f"{glaunch} counted of {gk}")
                if str(counted) != g or str(glaunch) != gk:
                    all_ok = False
                    notes.insert(0, "REPLAY COUNT MISMATCH")
        window = stdout_value(disc.stdout, "SHIM_WINDOW")
        if window is not None and seen is not None:
            # The program counted launches in a window (torch.profiler): compare the
            # shim's own count over the same window; the whole process is in the note.
            notes.append(f"in the profiled window; whole process: {seen}")
            seen, seen_s = window, str(window)
        ok, text = compare(base, disc, how)
        match = seen is not None and str(seen) == str(made)
        if not (ok and match):
            all_ok = False
            if ok and not match:
                notes.insert(0, "LAUNCH COUNT MISMATCH")
        w(f"| {esc(name)} | {made} | {seen_s} | {esc(text)} | {esc('; '.join(notes))} |")
    w("")
    w("† compared within the stated tolerance: float atomics (atomic_rowsum) vary run to run by themselves; "
      "row_softmax's policy accepts blocks that change the rounding of its sums.")
    w("")

    tune_progs = [p for p in progs if p[1] == "tune"]
    if tune_progs:
        w("## Tuning (tune mode)")
        w("")
        w("Third run with `XMATUNE_MODE=tune XMATUNE_POLICY=<the program's policy>`, outputs compared with the")
        w("run without the shim. Times are the tuner's medians for the key (from the log); *program time*")
        w("is the program's own median per launch (cudaEvents) without the shim → tuned.")
        w("")
        w("| program | kernel | keys tuned | program's config | its time | winner | its time | speed-up "
          "| candidates | rewritten | program time | outputs identical |")
        w("| --- | --- | ---: | --- | ---: | --- | ---: | ---: | --- | ---: | --- | --- |")
        for name, kind, how, policy in tune_progs:
            base, tune = Run(work, name, "base"), Run(work, name, "tune")
            ok, text = compare(base, tune, how)
            if tune.failure() and not base.failure():
                text += f": {tune.failure()}"
            ptime = f"{fmt_ms(base.time_ms)} → {fmt_ms(tune.time_ms)}" if base.time_ms and tune.time_ms else "—"
            rew = tune.log.rewritten()
            rew_s = "—" if rew is None else f"{rew}/{tune.log.launches()}"
            if not ok:
                all_ok = False
            tf = tune.failure()
            if not tune.log.tunes:
                why = tf or ("no log" if not tune.log.exists else "no tune event in the log")
                w(f"| {esc(name)} | — | 0 | {esc(base.config or '—')} | — | — | — | — | {esc(why)} | {rew_s} "
                  f"| {ptime} | {esc(text)} |")
                continue
            keys = defaultdict(set)
            for t in tune.log.tunes:
                keys[(t.get("kernel"), t.get("device"))].add(t.get("key"))
            for t in tune.log.tunes:
                own, win = t.get("own", {}) or {}, t.get("winner", {}) or {}
                st = defaultdict(int)
                for c in t.get("candidates", []) or []:
                    st[c.get("status", "?")] += 1
                cands = ", ".join(f"{v} {k}" for k, v in sorted(st.items())) or "none"
                try:
                    sp = f"{float(own.get('median_ms')) / float(win.get('median_ms')):.2f}×"
                except (TypeError, ValueError, ZeroDivisionError):
                    sp = "—"
                nk = len(keys[(t.get("kernel"), t.get("device"))])
                tol = " (tolerance)" if t.get("tolerance") else ""
                w(f"| {esc(name)} | {kname(t, 40)} | {nk} | {esc(fmt_cfg(own))} | {fmt_ms(own.get('median_ms'))} "
                  f"| {esc(fmt_cfg(win))} | {fmt_ms(win.get('median_ms'))} | {sp} | {esc(cands)} | {rew_s} "
                  f"| {ptime} | {esc(text)}{tol} |")
        w("")
        w("## Replay from the on-disk cache")
        w("")
        w("Fourth run, a new process with `XMATUNE_MODE=replay` and the cache the tune run wrote "
          "(`XMATUNE_CACHE`): winners come from the cache, nothing is benchmarked; each cached "
          "winner other than the program's own config is verified once before its first use.")
        w("")
        w("| program | benchmarks run | winners verified | rewritten | program time: no shim → replay | outputs identical |")
        w("| --- | ---: | ---: | ---: | --- | --- |")
        for name, kind, how, policy in tune_progs:
            base, rep = Run(work, name, "base"), Run(work, name, "replay")
            ok, text = compare(base, rep, how)
            if rep.failure() and not base.failure():
                text += f": {rep.failure()}"
            rew = rep.log.rewritten()
            rew_s = "—" if rew is None else f"{rew}/{rep.log.launches()}"
            ptime = f"{fmt_ms(base.time_ms)} → {fmt_ms(rep.time_ms)}" if base.time_ms and rep.time_ms else "—"
            benched = [t for t in rep.log.tunes if t.get("benchmarked", True)]
            verified = len(rep.log.tunes) - len(benched)
            if not ok or benched:
                all_ok = False
            w(f"| {esc(name)} | {len(benched)} | {verified} | {rew_s} | {ptime} | {esc(text)} |")
        w("")
    graph_progs = [p for p in progs if p[1] == "graph"]
    if graph_progs:
        w("## Graphs: replays from the on-disk cache")
        w("")
        w("saxpy.cu's kernel and arguments in graphs (graph_explicit: cudaGraphAddKernelNode and a child "
          "graph; graph_captured: stream capture), run with `XMATUNE_MODE=replay` and the cache saxpy's "
          "tune run wrote. *trusted*: `XMATUNE_CACHE_VERIFY=0`; *verify*: the default, under which a graph "
          "node never gets a winner not yet verified in its process. *Nodes rewritten*: explicit kernel "
          "nodes given the winner (graph_explicit), or captured launches rewritten (graph_captured). "
          "*Replay time*: median per replay of the one-node graph (one saxpy kernel), against saxpy's own "
          "median per launch without the shim and in its replay run (the tuned kernel).")
        w("")
        w("| program | cache | replays counted | kernel launches by replays | nodes rewritten | replay time "
          "| saxpy: no shim / tuned | outputs identical | note |")
        w("| --- | --- | ---: | ---: | ---: | ---: | --- | --- | --- |")
        sb, sr = Run(work, "saxpy", "base"), Run(work, "saxpy", "replay")
        for name, kind, how, policy in graph_progs:
            base = Run(work, name, "base")
            for mode, label in (("replay", "trusted"), ("replayv", "verify")):
                r = Run(work, name, mode)
                ok, text = compare(base, r, how)
                note = r.failure() or ""
                counted = sum(int(e.get("replays", 0) or 0) for e in r.log.graphs)
                glaunch = sum(int(s.get("graph_launches", 0) or 0) for s in r.log.summaries)
                if name == "graph_captured":
                    rew = r.log.rewritten()
                    rew_s = "—" if rew is None else f"{rew}/{r.log.launches()}"
                else:
                    gn = sum(int(s.get("graph_nodes", 0) or 0) for s in r.log.summaries)
                    gr = sum(int(s.get("graph_nodes_rewritten", 0) or 0) for s in r.log.summaries)
                    rew_s = f"{gr}/{gn}"
                whys = sorted({e.get("why", "?") for e in r.log.graph_nodes})
                if whys:
                    note = "; ".join([note] + [f"untuned: {x}" for x in whys] if note else [f"untuned: {x}" for x in whys])
                g = stdout_value(base.stdout, "GRAPH_REPLAYS")
                if not ok or str(counted) != str(g):
                    all_ok = False
                w(f"| {esc(name)} | {label} | {counted} of {g or '—'} | {glaunch} | {rew_s} | {fmt_ms(r.time_ms)} "
                  f"| {fmt_ms(sb.time_ms)} / {fmt_ms(sr.time_ms)} | {esc(text)} | {esc(note)} |")
        w("")
    trial_progs = [p for p in progs if p[1] == "trial"]
    if trial_progs:
        all_ok = trial_table(work, trial_progs, expects, w) and all_ok
    w(f"Overall: {'every row identical with matching counts' if all_ok else 'SEE ROWS ABOVE: not all identical/matching'}.")
    print("\n".join(lines))
    return 0


def status_counts(tunes):
    """{status: count} over every candidate of some tune events."""
    st = defaultdict(int)
    for t in tunes:
        for c in t.get("candidates", []) or []:
            st[str(c.get("status", "?"))] += 1
    return st


def exit_text(r):
    """A run's exit status in words: "0", "exit 2", "timed out (20 s)", "not run: ..."."""
    if r.note:
        return r.note.strip()
    if not r.ran or r.rc is None:
        return "not run"
    if r.rc in (124, 137):
        return f"timed out ({r.limit} s)" if r.limit else "timed out"
    if r.rc > 128:
        return f"killed by signal {r.rc - 128}"
    return str(r.rc) if r.rc == 0 else f"exit {r.rc}"


def trial_expected(r, mode, expect, ok, st, tunes):
    """(as expected?, what was expected) for a trial program's run. expect is run.sh's
    "dies|hangs|ok,fault|nofault"."""
    inline, _, faults = expect.partition(",")
    if mode == "inline":
        if inline == "dies":
            return (r.ran and not r.note and r.rc not in (None, 0, 124, 137)), "dies (non-zero exit)"
        if inline == "hangs":
            return (r.ran and not r.note and r.rc in (124, 137)), "hangs (the run's timeout)"
        return (r.rc == 0 and ok), "exit 0, outputs identical"
    nf = st.get("fault", 0)
    tuned = bool(tunes) and not any(t.get("untuned") or t.get("error") for t in tunes)
    if faults == "fault":
        return (r.rc == 0 and ok and nf > 0), "exit 0, outputs identical, candidates `fault`"
    return (r.rc == 0 and ok and nf == 0 and tuned), "exit 0, outputs identical, tuned, no `fault`"


def trial_table(work, progs, expects, w):
    """The trial programs' table (issue 24): each program tuned with the default settings
    (trials in the helper process) and with XMATUNE_TRIALS=inline. Returns True when every
    row is as expected."""
    w("## Trials in a side process")
    w("")
    w("Programs whose candidates fault (oob_blocks: writes gigabytes past a buffer) or hang "
      "(spin_grid: a grid-wide barrier over a grid that cannot be resident at once), and one that "
      "reads `__constant__` memory the program set (const_taps), tuned with `XMATUNE_MODE=tune "
      "XMATUNE_CACHE=off` twice: with the default settings (*helper*: candidates run in the trial "
      "helper process) and with `XMATUNE_TRIALS=inline` (*inline*: in the program's own process, "
      "the behaviour before issue 24, under a short timeout). *fault*: candidates the tune log "
      "gives status `fault`. Outputs are compared with the run without the shim.")
    w("")
    w("| program | trials | exit | outputs identical | candidates | fault | winner | expected | as expected | note |")
    w("| --- | --- | --- | --- | --- | ---: | --- | --- | --- | --- |")
    all_ok = True
    for name, kind, how, policy in progs:
        base = Run(work, name, "base")
        for mode, label in (("tune", "helper (default)"), ("inline", "inline")):
            r = Run(work, name, mode)
            tunes = r.log.tunes
            ok, text = compare(base, r, how)
            st = status_counts(tunes)
            cands = ", ".join(f"{v} {k}" for k, v in sorted(st.items())) or "—"
            win = "—"
            if tunes:
                t0 = tunes[0]
                wv, own = t0.get("winner", {}) or {}, t0.get("own", {}) or {}
                win = fmt_cfg(wv) if wv else "—"
                if wv.get("index") == -1:
                    win = "the program's own"
                if wv and own.get("median_ms") is not None and wv.get("median_ms") is not None:
                    win += f" ({fmt_ms(wv.get('median_ms'))}, own {fmt_ms(own.get('median_ms'))})"
            good, wanted = trial_expected(r, mode, expects.get(name, ""), ok, st, tunes)
            if not good:
                all_ok = False
            notes = []
            rf = r.failure()
            if rf and not r.note:
                notes.append(rf)
            for t in tunes:
                for k in ("untuned", "error"):
                    if t.get(k):
                        notes.append(f"{k}: {t.get(k)}")
            faults = [c for t in tunes for c in (t.get("candidates", []) or []) if c.get("status") == "fault"]
            for c in faults[:3]:
                notes.append(f"fault {c.get('config')}: {c.get('why')}")
            if len(faults) > 3:
                notes.append(f"{len(faults) - 3} more faults")
            hs = defaultdict(int)
            for h in r.log.helpers:
                hs[str(h.get("what"))] += 1
            if hs:
                notes.append("trial_helper events: " + ", ".join(f"{k} {v}" for k, v in sorted(hs.items())))
            for h in r.log.helpers:
                if h.get("what") == "fallback":
                    notes.append(f"helper fallback: {h.get('why')}")
            w(f"| {esc(name)} | {label} | {esc(exit_text(r))} | {esc(text)} | {esc(cands)} "
              f"| {st.get('fault', 0)} | {esc(win)} | {esc(wanted)} | {'yes' if good else '**no**'} "
              f"| {esc('; '.join(notes))} |")
    w("")
    return all_ok


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "log" and args:
        return cmd_log(args)
    if cmd == "launches" and len(args) == 1:
        n = Log(args[0]).launches()
        print("none" if n is None else n)
        return 0
    if cmd == "cmpf32" and len(args) == 4:
        return cmd_cmpf32(args)
    if cmd == "report" and len(args) == 1:
        return cmd_report(args[0])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
