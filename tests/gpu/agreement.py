#!/usr/bin/env python3
"""agreement.py WORK PROCESSES CONCURRENT PROG...: the tables of tests/gpu/agreement.sh."""
import collections
import json
import os
import struct
import sys

work, nproc, nconc, progs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
# within tolerance, as run.sh compares: float atomics; a policy that accepts rounding
TOL = {"atomic_rowsum": (1e-4, 1e-3), "row_softmax": (1e-5, 1e-9)}


def events(path, kind):
    out = []
    if os.path.exists(path):
        for line in open(path):
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("event") == kind:
                out.append(e)
    return out


def rc(d, p):
    try:
        return int(open(os.path.join(d, p + ".rc")).read())
    except (OSError, ValueError):
        return None


def same(prog, a, b):
    """'identical', 'within tolerance' or 'DIFFER' (or 'missing')."""
    try:
        x, y = open(a, "rb").read(), open(b, "rb").read()
    except OSError:
        return "missing"
    if x == y and x:
        return "identical"
    if prog in TOL and len(x) == len(y) and len(x) % 4 == 0 and x:
        rt, at = TOL[prog]
        fx = struct.unpack("<%df" % (len(x) // 4), x)
        fy = struct.unpack("<%df" % (len(y) // 4), y)
        if all(abs(u - v) <= at + rt * abs(v) for u, v in zip(fx, fy)):
            return "within tolerance"
    return "DIFFER"


def short(name):
    return name.split("(")[0]


def call(e):
    """How near one tune event's decision was to going otherwise, from its own figures:
    (the winner's distance from the best statistic, the tie limit, the margin), all
    relative. The tie rule picks the first config, in order (own, then the policy's),
    within the limit of the best: it goes otherwise if the winner measures beyond the
    limit or an earlier config inside it. The margin is the smallest of (limit - the
    winner's distance) and (an earlier config's distance - limit); None without figures."""
    field = "mean_ms" if e.get("statistic") == "mean" else "median_ms"
    limit = (e.get("race") or {}).get("tie_limit")
    cands = [dict(e["own"], index=-1)] + list(e.get("candidates") or [])
    stats = [(c.get("index", i - 1), c.get(field)) for i, c in enumerate(cands)]
    stats = [(i, v) for i, v in stats if isinstance(v, (int, float)) and v > 0]
    w = (e.get("winner") or {}).get("index")
    if not stats or limit is None or w is None:
        return None
    best = min(v for _, v in stats)
    dist = {i: v / best - 1 for i, v in stats}
    if w not in dist:
        return None
    margin = min([limit - dist[w]] + [d - limit for i, d in dist.items() if i < w])
    return dist[w], limit, margin


ok = True
# ---- 1. fresh processes
print("### Agreement: %d fresh processes, each with its own cache\n" % nproc)
print("| program | kernel | key | modal winner | agree | noise band (median) | the others' winners |")
print("| --- | --- | --- | --- | ---: | ---: | --- |")
worst = None
calls = collections.OrderedDict()  # (program, kernel, key): call() of each process's event
for p in progs:
    per = collections.OrderedDict()
    for i in range(nproc):
        d = os.path.join(work, "fresh", str(i))
        for e in events(os.path.join(d, p + ".jsonl"), "tune"):
            if not e.get("benchmarked"):
                continue
            k = (short(e["name"]), e["key"])
            per.setdefault(k, []).append((e["winner"]["config"], e.get("tie_band", 0)))
            c = call(e)
            if c:
                calls.setdefault((p,) + k, []).append(c)
    if not per:
        print("| %s | (no tuning ran) | | | | | |" % p)
        ok = False
    for (kern, key), picks in per.items():
        c = collections.Counter(w for w, _ in picks)
        modal, n = c.most_common(1)[0]
        bands = sorted(b for _, b in picks)
        others = ", ".join("%s: %d" % (w, k) for w, k in c.most_common()[1:]) or "—"
        print("| %s | %s | %s | %s | %d/%d | %.2f%% | %s |" % (p, kern, key, modal, n, nproc,
                                                            100 * bands[len(bands) // 2], others))
        worst = n if worst is None else min(worst, n)
        if n < 0.9 * nproc:
            ok = False
print("\nLowest agreement: %s/%d per key (target: at least %d/%d, which PASS needs; issue 26 "
      "asks for %d/%d).\n" % (worst, nproc, -(-9 * nproc // 10), nproc, nproc, nproc))



print("How near each key's decision came to going otherwise, over the fresh processes: the "
      "winner's distance from the process's best, the process's tie limit, and the closest "
      "call (the smallest margin, in points of the best: how far the winner was inside "
      "the limit, or the nearest earlier config outside it).\n")
print("| program | kernel | key | winner's distance from the best | tie limit | closest call |")
print("| --- | --- | --- | ---: | ---: | ---: |")
for (p, kern, key), cs in calls.items():
    print("| %s | %s | %s | %.2f–%.2f%% | %.2f–%.2f%% | %.2f points |" % (
        p, kern, key, 100 * min(c[0] for c in cs), 100 * max(c[0] for c in cs),
        100 * min(c[1] for c in cs), 100 * max(c[1] for c in cs), 100 * min(c[2] for c in cs)))
print()

# ---- 2. concurrent processes on one cache
print("### %d processes at once on one cache\n" % nconc)
print("| program | keys | records in the cache | benchmarked (all processes) | "
      "used another's winner | ran the own config while waiting | outputs |")
print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
for p in progs:
    base = os.path.join(work, "base", p + ".bin")
    keys, bench, verified, outs = set(), 0, 0, set()
    waiting = 0
    for i in range(nconc):
        d = os.path.join(work, "shared", p, str(i))
        evs = events(os.path.join(d, p + ".jsonl"), "tune")
        mine = set()
        for e in evs:
            mine.add((e["kernel"], e["key"]))
            keys.add((e["kernel"], e["key"]))
            if e.get("benchmarked"):
                bench += 1
            else:
                verified += 1
        outs.add(same(p, os.path.join(d, p + ".bin"), base))
        if rc(d, p) != 0:
            outs.add("rc %s" % rc(d, p))
    cache = os.path.join(work, "shared", p, "cache.jsonl")
    recs = [json.loads(l) for l in open(cache)] if os.path.exists(cache) else []
    ids = {(r["kernel"], r["entry_fp"], r["key"]) for r in recs}
    # a key neither benchmarked nor verified by a process ran its own config (a live claim)
    waiting = nconc * len(keys) - bench - verified
    print("| %s | %d | %d | %d | %d | %d | %s |" % (p, len(keys), len(recs), bench, verified,
                                                 waiting, ", ".join(sorted(outs))))
    if len(ids) != len(recs) or len(recs) != len(keys) or bench != len(keys):
        ok = False
print()

# ---- 3. twice against one cache
print("### Two runs against one cache\n")
print("(A winner that is the program's own config runs without a check: not counted as verified.)\n")
print("| program | keys tuned (1st) | benchmarked (2nd) | verified once (2nd) | "
      "2nd vs 1st output | 2nd vs no shim |")
print("| --- | ---: | ---: | ---: | --- | --- |")
for p in progs:
    d1, d2 = os.path.join(work, "twice", "1"), os.path.join(work, "twice", "2")
    e1 = events(os.path.join(d1, p + ".jsonl"), "tune")
    e2 = events(os.path.join(d2, p + ".jsonl"), "tune")
    b2 = sum(1 for e in e2 if e.get("benchmarked"))
    v2 = collections.Counter((e["kernel"], e["key"]) for e in e2 if not e.get("benchmarked"))
    once = sum(1 for n in v2.values() if n == 1)
    s12 = same(p, os.path.join(d2, p + ".bin"), os.path.join(d1, p + ".bin"))
    s2b = same(p, os.path.join(d2, p + ".bin"), os.path.join(work, "base", p + ".bin"))
    print("| %s | %d | %d | %d of %d | %s | %s |" % (p, len(e1), b2, once, len(v2), s12, s2b))
    if b2 or once != len(v2) or "DIFFER" in (s12, s2b) or "missing" in (s12, s2b):
        ok = False
print("\nResult: %s" % ("PASS" if ok else "FAIL (see the rows above)"))
sys.exit(0 if ok else 1)
