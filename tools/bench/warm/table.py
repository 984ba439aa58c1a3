#!/usr/bin/env python3
"""table.py -- the never-slower benchmark's report, from tools/bench/warm/run.sh's work folder.

    python3 tools/bench/warm/table.py WORK      the Markdown report of one run.sh call
    python3 tools/bench/warm/table.py --selftest   the parsers on canned outputs and the
                                                   report of a canned work folder (ctest)

WORK holds programs.tsv (name, group, parser, version), env.txt, and per program and run
(plain, first, warm) logs/NAME.RUN.{stdout,stderr,rc,wall,limit,note}, the shim runs' logs
logs/NAME.RUN.jsonl, and out/NAME.RUN.bin for programs that write their outputs to a file.

Two tables. "Times": per program its wall time and each figure the program printed itself
(one parser per kind of program, below), for each run, and the ratios first/plain and
warm/plain, time-like: above 1 is slower than without the shim (a rate such as GFlop/s is
divided the other way: plain / run). "Shim work": from each shim run's log, the trial
helpers started (`trial_helper` events `started` and `restarted`), the keys tuned (`tune`
events not `from_cache`), the keys taken from the cache and verified (`from_cache`), the
rechecks, the winners' share (the first run's winners' times over its own configs'), the
shim's host µs at the first launch of a cached key in the warm run (the
`cache_hit` events' `host_us`: the largest, and over how many keys; "-" when the log has
none), and whether the outputs stayed the same. Then a summary: the largest ratios and the
warm runs that still started a helper or tuned a key. Exit status: 0 when every run that ran
finished with status 0 within its limit, 1 otherwise, 2 when the folder cannot be read.
"""
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "gpu"))
from summarize import Log  # noqa: E402  (the GPU suite's log reader)

RUNS = ("plain", "first", "warm")
NUM = r"([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"


class Fig:
    """One figure a program printed: kind "time" (smaller is better), "rate" (larger is
    better) or "count" (no ratio)."""

    def __init__(self, name, unit, kind, value):
        self.name, self.unit, self.kind, self.value = name, unit, kind, float(value)

    def label(self):
        return "%s (%s)" % (self.name, self.unit) if self.unit else self.name

    def __repr__(self):
        return "Fig(%r, %r, %r, %r)" % (self.name, self.unit, self.kind, self.value)


# --- the parsers: text of a run's stdout -> ([Fig], check) ----------------------------------
# check: the program's own verdict on its result ("ok", "FAIL", "3 off"), or None when it
# gives none (the suite's programs write their outputs, compared byte for byte instead).

def parse_suite(text):
    """examples/gpu (tests/gpu/common.h's LoopTimer): TIME_MS (median per launch, the first
    left out), TOTAL_MS (the whole loop), FIRST_MS (the first launch)."""
    figs = []
    for key, name in (("TOTAL_MS", "loop"), ("TIME_MS", "median launch"), ("FIRST_MS", "first launch")):
        m = re.search(r"^%s\s+%s\s*$" % (key, NUM), text, re.M)
        if m:
            figs.append(Fig(name, "ms", "time", m.group(1)))
    return figs, None


def parse_polybench(text):
    """PolyBench/GPU: "GPU Time in seconds:" then the seconds on the next line (sgrauerg's
    1.0), or "GPU Runtime: 0.0012s" (later copies); the CPU reference's time is not the
    GPU's and is left out. Check: "Non-Matching CPU-GPU Outputs Beyond Error Threshold of
    0.05 Percent: N"."""
    figs = []
    m = re.search(r"GPU Time in seconds:\s*\n\s*%s\s*$" % NUM, text, re.M) or \
        re.search(r"GPU Runtime:\s*%s\s*s" % NUM, text)
    if m:
        figs.append(Fig("GPU time", "s", "time", m.group(1)))
    m = re.search(r"Non-Matching CPU-GPU Outputs Beyond Error Threshold of [0-9.]+ Percent:\s*(\d+)", text)
    check = None
    if m:
        check = "ok" if int(m.group(1)) == 0 else "%s off" % m.group(1)
    return figs, check


def parse_needle(text):
    """Rodinia needle built with -DTIMING: "Exec: MS", the host's clock around the two loops
    of kernel launches (no synchronization inside it: launch time, tuning included)."""
    m = re.search(r"^Exec:\s*%s" % NUM, text, re.M)
    return ([Fig("Exec", "ms", "time", m.group(1))] if m else []), None


def sample_check(text):
    """The cuda-samples' own verdicts, in the words each prints."""
    bad = ("Test failed", "Result = FAIL", "DON'T Match", "MISMATCH", "kernel FAILED")
    if any(b in text for b in bad):
        return "FAIL"
    m = re.search(r"Test Results: (\d+) Failures", text)
    if m:
        return "ok" if m.group(1) == "0" else "FAIL"
    good = ("Test passed", "Result = PASS", "Results Match", "Compare OK")
    return "ok" if any(g in text for g in good) else None


def unique(figs):
    """A second figure of the same name becomes "NAME #2" (scan prints two "scan" lines)."""
    seen = {}
    for f in figs:
        n = seen.get(f.name, 0) + 1
        seen[f.name] = n
        if n > 1:
            f.name = "%s #%d" % (f.name, n)
    return figs


def parse_matrixmul(text):
    """cuda-samples matrixMul: "Performance= 6212.00 GFlop/s, Time= 0.021 msec, ..."."""
    figs = []
    m = re.search(r"Performance=\s*%s\s*GFlop/s,\s*Time=\s*%s\s*msec" % (NUM, NUM), text)
    if m:
        figs += [Fig("Performance", "GFlop/s", "rate", m.group(1)), Fig("Time", "ms", "time", m.group(2))]
    return figs, sample_check(text)


def parse_cudasamples(text):
    """cuda-samples' "NAME, Throughput = X UNIT, Time = Y s|ms, Size = ..." lines (reduction,
    transpose: one per kernel, scan, sortingNetworks, convolutionSeparable): the Time of
    each (its throughput is the same figure inverted)."""
    figs = []
    for m in re.finditer(r"^(\S[^,\n]*), Throughput = %s \S+, Time = %s (s|ms)\b" % (NUM, NUM), text, re.M):
        figs.append(Fig(m.group(1).strip(), m.group(4), "time", m.group(3)))
    return unique(figs), sample_check(text)


def parse_simpletemplates(text):
    """cuda-samples simpleTemplates: "Processing time: X (ms)", once per template instance."""
    figs = [Fig("Processing time", "ms", "time", m.group(1))
            for m in re.finditer(r"Processing time:\s*%s\s*\(ms\)" % NUM, text)]
    return unique(figs), sample_check(text)


def parse_app(text):
    """tests/integration's app_rt (run.sh --dry, the simulated driver): "LAUNCHES n"."""
    m = re.search(r"^LAUNCHES\s+(\d+)", text, re.M)
    return ([Fig("LAUNCHES", "", "count", m.group(1))] if m else []), None


PARSERS = {"suite": parse_suite, "polybench": parse_polybench, "needle": parse_needle,
           "matrixmul": parse_matrixmul, "cudasamples": parse_cudasamples,
           "simpletemplates": parse_simpletemplates, "app": parse_app}


# --- one run ------------------------------------------------------------------------------

def slurp(path):
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def cache_hits(path):
    """The `cache_hit` events of a log (summarize.Log counts them only)."""
    hits = []
    text = slurp(path) or ""
    for line in text.splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if isinstance(ev, dict) and ev.get("event") == "cache_hit":
            hits.append(ev)
    return hits


class Run:
    def __init__(self, work, name, mode, parser):
        base = os.path.join(work, "logs", "%s.%s" % (name, mode))
        self.mode = mode
        self.note = (slurp(base + ".note") or "").strip()
        rc = (slurp(base + ".rc") or "").strip()
        self.rc = int(rc) if rc.lstrip("-").isdigit() else None
        self.limit = (slurp(base + ".limit") or "").strip()
        wall = (slurp(base + ".wall") or "").strip()
        self.wall = float(wall) if re.fullmatch(NUM, wall) else None
        self.ran = self.rc is not None
        self.figs, self.check = PARSERS[parser](slurp(base + ".stdout") or "") if self.ran else ([], None)
        self.out = os.path.join(work, "out", "%s.%s.bin" % (name, mode))
        self.log = Log(base + ".jsonl") if mode != "plain" else None
        self.hits = cache_hits(base + ".jsonl") if mode != "plain" else []

    def status(self):
        """None when it ran and ended with 0; else what the cells say instead of figures."""
        if not self.ran:
            return self.note.split(":")[0] if self.note else "no run"
        if self.rc in (124, 137):
            return "timeout %s s" % self.limit if self.limit else "timeout"
        if self.rc != 0:
            return "rc=%d" % self.rc
        return None

    def helpers(self):
        return sum(1 for h in self.log.helpers if h.get("what") in ("started", "restarted"))

    def tuned(self):
        return sum(1 for t in self.log.tunes if not t.get("from_cache"))

    def from_cache(self):
        return sum(1 for t in self.log.tunes if t.get("from_cache"))

    def rechecks(self):
        return self.log.other.get("recheck", 0)

    def share(self):
        """Sum of the winners' times / sum of the own configs' over the keys this run tuned
        and timed (a winner that is the own config counts its own time): what the kernels'
        speed-ups promise the program; None when nothing was timed."""
        won = own = 0.0
        for t in self.log.tunes:
            o = t.get("own") or {}
            w = t.get("winner") or {}
            ot = o.get("median_ms", o.get("mean_ms"))
            wt = w.get("median_ms", w.get("mean_ms"))
            if t.get("from_cache") or not isinstance(ot, (int, float)) or ot <= 0:
                continue
            if w.get("index", -1) == -1 or not isinstance(wt, (int, float)):
                wt = ot
            won += wt
            own += ot
        return won / own if own > 0 else None


# --- cells --------------------------------------------------------------------------------

def fmt(v):
    """Four significant digits, no exponent for the magnitudes programs print."""
    if v is None:
        return "-"
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 1000:
        return "%.0f" % v
    if a >= 0.001:
        return ("%.4g" % v)
    return "%.2e" % v


def ratio_value(kind, plain, run):
    """Time-like: above 1 is slower than without the shim; None where there is none."""
    if kind == "count" or plain is None or run is None:
        return None
    num, den = (run, plain) if kind == "time" else (plain, run)
    return num / den if den != 0 else None


def fmt_ratio(r):
    if r is None:
        return "-"
    return "%.3f" % r if r < 10 else "%.1f" % r if r < 1000 else "%.0f" % r


def ratio(kind, plain, run):
    return fmt_ratio(ratio_value(kind, plain, run))


def md_row(cells):
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def same_file(a, b):
    try:
        with open(a, "rb") as f, open(b, "rb") as g:
            return f.read() == g.read()
    except OSError:
        return None


# Programs whose outputs vary from run to run without the shim too (float atomics).
VARIES = {"atomic_rowsum": "float atomics: they vary without the shim too"}


def outputs_cell(name, runs):
    """Output files compared with the plain run's byte for byte where the program writes
    one (a run that failed is not compared); else the program's own verdicts,
    plain/first/warm."""
    plain = runs["plain"]
    if plain.ran and os.path.exists(plain.out):
        if plain.status():
            return "-"
        differ, failed = [], []
        for m in ("first", "warm"):
            r = runs[m]
            if not r.ran:
                continue
            if r.status():
                failed.append("%s %s" % (m, r.status()))
                continue
            s = same_file(plain.out, r.out)
            if s is not True:
                differ.append(m if s is False else m + " (none)")
        cell = "differ: " + ", ".join(differ) if differ else "same"
        if differ and name in VARIES:
            cell += " (%s)" % VARIES[name]
        return cell + "".join("; %s: not compared" % f for f in failed)
    checks = [runs[m].check if runs[m].ran else None for m in RUNS]
    if all(c is None for c in checks):
        return "-"
    return "/".join(c or "-" for c in checks)


def report(work):
    programs = []
    with open(os.path.join(work, "programs.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, group, parser, version = (line.rstrip("\n").split("\t") + ["", "", ""])[:4]
            programs.append((name, group, parser, version))
    lines, bad = [], False
    env = slurp(os.path.join(work, "env.txt"))
    if env:
        lines += ["- " + l for l in env.strip().splitlines()] + [""]

    data = []
    for name, group, parser, version in programs:
        runs = {m: Run(work, name, m, parser) for m in RUNS}
        for r in runs.values():
            if r.ran and r.status():
                bad = True
        data.append((name, version, runs))

    ratios = {(m, wall): [] for m in ("first", "warm") for wall in (True, False)}
    lines.append("Times: wall and the programs' own figures; ratios time-like (> 1: slower than plain)")
    lines.append("")
    lines.append(md_row(["program", "version", "figure", "plain", "first", "first/plain", "warm", "warm/plain"]))
    lines.append(md_row(["---"] * 3 + ["---:"] * 5))
    for name, version, runs in data:
        rows = [("wall (s)", "time", {m: runs[m].wall for m in RUNS})]
        labels, kinds = [], {}
        for m in RUNS:
            for f in runs[m].figs:
                if f.label() not in kinds:
                    labels.append(f.label())
                    kinds[f.label()] = f.kind
        for lab in labels:
            vals = {m: next((f.value for f in runs[m].figs if f.label() == lab), None) for m in RUNS}
            rows.append((lab, kinds[lab], vals))
        if len(rows) == 1 and all(runs[m].ran for m in RUNS):
            rows.append(("(no figures printed)", "count", {m: None for m in RUNS}))
        for i, (lab, kind, vals) in enumerate(rows):
            cells = [name if i == 0 else "", version if i == 0 else "", lab]
            for m in RUNS:
                st = runs[m].status()
                # a run that failed keeps its wall time (how long it took to fail), no figures
                cell = fmt(vals[m]) if (st is None or (i == 0 and runs[m].ran)) else "-"
                if st and i == 0:
                    cell = "%s (%s)" % (cell, st) if runs[m].ran else st
                cells.append(cell)
                if m != "plain":
                    ok = runs["plain"].status() is None and st is None
                    r = ratio_value(kind, vals["plain"], vals[m]) if ok else None
                    cells.append(fmt_ratio(r))
                    if r is not None:
                        ratios[(m, i == 0)].append((r, name, lab))
            lines.append(md_row(cells))
    lines.append("")
    lines.append("Shim work: from each shim run's log (first / warm)")
    lines.append("")
    lines.append(md_row(["program", "helpers started", "keys tuned", "from cache", "rechecks",
                         "winners' share (first)", "cached key's 1st launch, host µs (warm: max, keys)",
                         "outputs"]))
    lines.append(md_row(["---"] + ["---:"] * 6 + ["---"]))
    for name, version, runs in data:
        def pair(fn):
            return " / ".join(str(fn(runs[m])) if runs[m].ran and runs[m].log.exists else "-"
                              for m in ("first", "warm"))
        hits = [h.get("host_us") for h in runs["warm"].hits if isinstance(h.get("host_us"), (int, float))]
        hit = "%s (%d)" % (fmt(max(hits)), len(hits)) if hits else "-"
        first = runs["first"]
        share = first.share() if first.ran and first.log.exists else None
        lines.append(md_row([name, pair(Run.helpers), pair(Run.tuned), pair(Run.from_cache),
                             pair(Run.rechecks), fmt_ratio(share), hit, outputs_cell(name, runs)]))
    lines += [""] + summary(data, ratios)
    return "\n".join(lines) + "\n", bad


def summary(data, ratios):
    """The lines that read issue 48's and 49's targets off the tables: the largest ratios
    (own figures: warm at most 1.02, first at most 1.10), the warm runs that started a
    helper or tuned a key, the largest cached key's first launch."""
    out = ["Summary:", ""]
    for m, limit in (("warm", 1.02), ("first", 1.10)):
        for wall, what in ((False, "programs' own figures"), (True, "wall")):
            rs = ratios[(m, wall)]
            if not rs:
                out.append("- %s, %s/plain: none" % (what, m))
                continue
            r, name, lab = max(rs)
            over = sum(1 for x in rs if x[0] > limit)
            out.append("- %s, %s/plain: largest %s (%s, %s); %d of %d above %.2f" %
                       (what, m, fmt_ratio(r), name, lab, over, len(rs), limit))
    over = []
    for name, _, runs in data:
        first = runs["first"]
        share = (first.share() if first.ran and first.log.exists else None) or 1.0
        worst = max((x for x in ratios[("warm", False)] if x[1] == name), default=None)
        if worst and worst[0] > 1.02 * share:
            over.append("%s (%s: %s > 1.02 x %s)" % (name, worst[2], fmt_ratio(worst[0]), fmt_ratio(share)))
    out.append("- programs whose own figures' warm/plain exceed 1.02 x their winners' share: %s" %
               ("; ".join(over) if over else "none"))
    for what, fn in (("started a trial helper", Run.helpers), ("tuned a key", Run.tuned)):
        names = [name for name, _, runs in data
                 if runs["warm"].ran and runs["warm"].log.exists and fn(runs["warm"]) > 0]
        out.append("- warm runs that %s: %s" % (what, ", ".join(names) if names else "none"))
    hits = [(h.get("host_us"), name) for name, _, runs in data for h in runs["warm"].hits
            if isinstance(h.get("host_us"), (int, float))]
    if hits:
        us, name = max(hits)
        out.append("- cached key's first launch in the warm runs: largest %s µs (%s), %d keys" %
                   (fmt(us), name, len(hits)))
    else:
        out.append("- cached key's first launch in the warm runs: no cache_hit events")
    return out


# --- selftest -----------------------------------------------------------------------------

HERE = os.path.dirname(os.path.abspath(__file__))


def selftest():
    """Every parser on its canned output (testdata/*.txt, written from the printf lines of
    the sources in .bench-src; the suite's from tests/gpu/common.h), then the report of a
    canned work folder made here, against testdata/expected.md."""
    want = {
        "suite.txt": ("suite", [("loop", "ms", "time", 41.25), ("median launch", "ms", "time", 0.2),
                                ("first launch", "ms", "time", 3.5)], None),
        "polybench.txt": ("polybench", [("GPU time", "s", "time", 0.009412)], "ok"),
        "polybench_runtime.txt": ("polybench", [("GPU time", "s", "time", 0.0012)], "17 off"),
        "needle.txt": ("needle", [("Exec", "ms", "time", 12.5)], None),
        "matrixmul.txt": ("matrixmul", [("Performance", "GFlop/s", "rate", 6212.34),
                                        ("Time", "ms", "time", 0.021)], "ok"),
        "reduction.txt": ("cudasamples", [("Reduction", "s", "time", 0.00011)], "ok"),
        "transpose.txt": ("cudasamples", [("transpose simple copy", "ms", "time", 0.01234),
                                          ("transpose naive", "ms", "time", 0.03021)], "FAIL"),
        "scan.txt": ("cudasamples", [("scan", "s", "time", 3e-05), ("scan #2", "s", "time", 0.00041)], "ok"),
        "simpletemplates.txt": ("simpletemplates", [("Processing time", "ms", "time", 0.25),
                                                    ("Processing time #2", "ms", "time", 0.125)], "ok"),
        "app.txt": ("app", [("LAUNCHES", "", "count", 29)], None),
    }
    fails = 0
    for fname, (parser, figs, check) in sorted(want.items()):
        text = slurp(os.path.join(HERE, "testdata", fname))
        got, gcheck = PARSERS[parser](text)
        g = [(f.name, f.unit, f.kind, f.value) for f in got]
        if g != figs or gcheck != check:
            print("FAIL %s: got %r %r, want %r %r" % (fname, g, gcheck, figs, check))
            fails += 1
    with tempfile.TemporaryDirectory() as work:
        canned_work(work)
        text, bad = report(work)
    expected = slurp(os.path.join(HERE, "testdata", "expected.md"))
    if text != expected:
        print("FAIL report differs from testdata/expected.md; got:\n" + text)
        fails += 1
    if not bad:
        print("FAIL a failed run did not make the status 1")
        fails += 1
    if fails:
        return 1
    print("table selftest: ok (%d outputs, one report)" % len(want))
    return 0


def canned_work(work):
    """A work folder as run.sh leaves it: a suite program (outputs compared as files, keys
    tuned then taken from the cache), matrixMul (a rate figure, its own check, cache_hit
    events, a key tuned again in the warm run), needle, whose first run timed out and warm run was not started, and
    atomic_rowsum, whose outputs differ (as they may) and whose warm run failed."""
    os.makedirs(os.path.join(work, "logs"))
    os.makedirs(os.path.join(work, "out"))

    def put(rel, text, mode="w"):
        with open(os.path.join(work, rel), mode) as f:
            f.write(text)

    put("programs.tsv", "# name\tgroup\tparser\tversion\nsaxpy\tsuite\tsuite\txmatune@abc1234\n"
        "cs_matrixMul\tpublic\tmatrixmul\tNVIDIA/cuda-samples@c94ff36\n"
        "rd_needle\tpublic\tneedle\tyuhc/gpu-rodinia@9c10d3e\n"
        "atomic_rowsum\tsuite\tsuite\txmatune@abc1234\n")
    put("env.txt", "date: 2026-12-07 08:00 UTC\nGPU: canned\n")
    walls = {"plain": 0.5, "first": 4.25, "warm": 0.51}
    suite = {"plain": (0.2, 41.25, 3.5), "first": (0.1, 80.0, 60.0), "warm": (0.1, 20.0, 0.2)}
    mm = {"plain": (6212.0, 0.021), "first": (3000.0, 0.0435), "warm": (6400.0, 0.0205)}
    for m in RUNS:
        b = "logs/saxpy.%s." % m
        put(b + "rc", "0\n")
        put(b + "wall", "%.3f\n" % walls[m])
        put(b + "limit", "40\n")
        put(b + "stdout", "LAUNCHES 200\nTIME_MS %.6f\nTOTAL_MS %.6f\nFIRST_MS %.6f\n" % suite[m])
        put("out/saxpy.%s.bin" % m, b"\x01\x02" if m != "warm" else b"\x01\x03", "wb")
        b = "logs/cs_matrixMul.%s." % m
        put(b + "rc", "0\n")
        put(b + "wall", "%.3f\n" % (walls[m] * 2))
        put(b + "stdout", "Performance= %.2f GFlop/s, Time= %.3f msec, Size= 131072000 Ops, "
            "WorkgroupSize= 1024 threads/block\nResult = %s\n" % (mm[m] + ("PASS" if m != "first" else "FAIL",)))
    tune = {"event": "tune", "kernel": "k", "key": "n=1", "own": {"median_ms": 2.0},
            "winner": {"index": 3, "median_ms": 0.5}}
    helper = {"event": "trial_helper", "what": "started"}
    put("logs/saxpy.first.jsonl", "\n".join(json.dumps(e) for e in [
        {"event": "start"}, helper, dict(helper, what="ended"), dict(helper, what="restarted"), tune,
        dict(tune, key="n=2", own={"median_ms": 1.0}, winner={"index": -1}), {"event": "recheck"}]) + "\n")
    put("logs/saxpy.warm.jsonl", "\n".join(json.dumps(e) for e in [
        {"event": "start"}, dict(tune, from_cache=True), dict(tune, key="n=2", from_cache=True)]) + "\n")
    put("logs/cs_matrixMul.first.jsonl", json.dumps(helper) + "\n" + json.dumps(tune) + "\n")
    put("logs/cs_matrixMul.warm.jsonl", "\n".join(json.dumps(e) for e in [
        helper, dict(tune, key="untold"), {"event": "cache_hit", "kernel": "k", "key": "a", "host_us": 12.5},
        {"event": "cache_hit", "kernel": "k", "key": "b", "host_us": 48.0}, "not json"]) + "\n")
    put("logs/rd_needle.plain.rc", "0\n")
    put("logs/rd_needle.plain.wall", "0.320\n")
    put("logs/rd_needle.plain.stdout", "WG size of kernel = 16 \nExec: 1.250000\n")
    put("logs/rd_needle.first.rc", "124\n")
    put("logs/rd_needle.first.limit", "40\n")
    put("logs/rd_needle.first.wall", "40.012\n")
    put("logs/rd_needle.first.stdout", "WG size of kernel = 16 \n")
    put("logs/rd_needle.warm.note", "not run: time budget (330 s) spent\n")
    for m, rc, data in (("plain", 0, b"\x00"), ("first", 0, b"\x01"), ("warm", 1, b"")):
        put("logs/atomic_rowsum.%s.rc" % m, "%d\n" % rc)
        put("logs/atomic_rowsum.%s.wall" % m, "0.250\n")
        put("logs/atomic_rowsum.%s.stdout" % m, "LAUNCHES 10\nTIME_MS 0.500000\n" if rc == 0 else "")
        put("out/atomic_rowsum.%s.bin" % m, data, "wb")


def main(argv):
    if len(argv) == 2 and argv[1] == "--selftest":
        return selftest()
    if len(argv) != 2:
        print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
        return 2
    try:
        text, bad = report(argv[1])
    except OSError as e:
        print("table.py: %s" % e, file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
