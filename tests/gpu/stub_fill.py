#!/usr/bin/env python3
"""stub_fill.py -- the "fill in what the stub's comments name" step of stub_tune.sh, one
small documented edit list per program, and the table stub_tune.sh prints.

Standard library only (python3 >= 3.8).

    stub_fill.py fill PROGRAM STUB OUT      writes OUT: the skeleton `xmatune discover --stub`
                                            wrote (STUB), with only PROGRAM's edits; prints them
    stub_fill.py table WORK                 the Markdown table of a stub_tune.sh work folder
    stub_fill.py cmp A B HOW                exit 0 when two output files agree (HOW: exact, or
                                            f32tol:RTOL:ATOL)

Issue 12's done-when: the tuning programs tune "from skeletons written by `discover --stub`
with no edits beyond filling in what their comments name (tensor shapes, a choice among the
offered launch idioms)". So every edit below is one the skeleton's comments ask for, and
each is checked to apply exactly once: when the skeleton changes, a fill fails loudly
instead of editing something else.

  keep(NAME)        the header comment says "Delete the kernels not worth tuning": keep the
                    entry whose comment names NAME
  idiom(WHICH)      "choose below": the offered idiom WHICH ("stride", "rows", "element")
                    replaces the chosen one (its space:, condition: and launch: lines)
  triggers(LIST)    "keep the scalars that decide the best config": the triggers line
  tolerance(P, SHAPE)  the buffer comment's form "for one buffer only, its type and size,
                    and a tolerance of its own": tensors: and verify: for parameter P
  name(A, B, VAR)   the comment "covered pA (or pB, of the same value here: name the right
                    one)": cdiv(pA, VAR) becomes cdiv(pB, VAR), the argument the grid follows
"""
import json
import os
import re
import struct
import sys

TITLES = {"rows": "one block per row or tile", "element": "one thread per element",
          "stride": "a grid-stride loop"}


class FillError(Exception):
    pass


def entries(text):
    """(head, [entry text]): the skeleton's header and its entries, each starting with
    the blank line and the "  # <kernel name>" comment before "  - mangled:"."""
    parts = re.split(r"\n(?=\n  # )", text)
    return parts[0], parts[1:]


def keep(text, name):
    head, ents = entries(text)
    kept = [e for e in ents if name in e.strip().splitlines()[0]]
    if len(kept) != 1:
        raise FillError("keep(%s): %d entries name it" % (name, len(kept)))
    return head + "\n" + kept[0].rstrip("\n") + "\n", "kept the entry of %s only" % name


def idiom(text, which):
    title = TITLES[which]
    m = re.search(r"^    # or, %s[^\n]*:\n((?:    #   [^\n]*\n)+)" % re.escape(title), text, re.M)
    if not m:
        raise FillError("idiom(%s): the skeleton does not offer it" % which)
    chosen = re.sub(r"^    #   ", "    ", m.group(1), flags=re.M)
    out, n = re.subn(r"^    (space|condition|launch): [^\n]*\n", "", text, flags=re.M)
    if not 2 <= n <= 3:
        raise FillError("idiom(%s): %d active space/condition/launch lines" % (which, n))
    return out.rstrip("\n") + "\n" + chosen, "chose the offered idiom: %s" % title


def triggers(text, names):
    out, n = re.subn(r"^    (# )?triggers: \[[^\]\n]*\][^\n]*$",
                     "    triggers: [%s]" % ", ".join(names), text, flags=re.M)
    if n != 1:
        raise FillError("triggers: %d triggers lines" % n)
    return out, "triggers: [%s]" % ", ".join(names)


def tolerance(text, param, shape):
    out, n1 = re.subn(r"^    # tensors: \{pN: \{dtype: f32, shape: \[pM\]\}\}[^\n]*$",
                      "    tensors: {%s: {dtype: f32, shape: [%s]}}" % (param, shape), text, flags=re.M)
    out, n2 = re.subn(r"^    # verify: \{pN: (\{rtol: [^}]*\})\}[^\n]*$",
                      lambda m: "    verify: {%s: %s}" % (param, m.group(1)), out, flags=re.M)
    if n1 != 1 or n2 != 1:
        raise FillError("tolerance: the buffer comment lines are not there (%d, %d)" % (n1, n2))
    return out, "%s: f32 [%s], compared within the offered tolerance" % (param, shape)


def name(text, old, new, var):
    flat = re.sub(r"\n    # ", " ", text)
    if not re.search(r"covered %s \(or %s, of the same value here" % (old, new), flat):
        raise FillError("name(%s -> %s): the comment does not offer it" % (old, new))
    a, b = "cdiv(%s, %s)" % (old, var), "cdiv(%s, %s)" % (new, var)
    out, n = re.subn(re.escape(a), b, text)
    if n < 1:
        raise FillError("name: %s is not in the skeleton" % a)
    return out, "%s -> %s (the argument the comment offers as the other one)" % (a, b)


# Per program: the edits, in order. The GPU suite's tuning programs (tests/gpu/run.sh), and
# programs of the simulated driver (stub_tune.sh --sim: tests/integration/app scenarios).
FILLS = {
    # grid-stride, one size: "nothing fits" keeps grid0; saxpy loops over n.
    "saxpy": [("keep", "saxpy"), ("idiom", "stride"), ("triggers", ["p0"])],
    # x covers cols (p3), y rows (p2): 8192 x 8192, so the stub cannot tell them apart.
    "transpose": [("keep", "transpose_naive"), ("name", "p2", "p3", "BX"),
                  ("triggers", ["p2", "p3"])],
    # one block per row (grid.y == rows): kept; float atomics into out[rows].
    "atomic_rowsum": [("keep", "row_sum_atomic"), ("tolerance", "p1", "p2"),
                      ("triggers", ["p2", "p3"])],
    # grid-stride, in place.
    "inplace_axpb": [("keep", "axpb_inplace"), ("idiom", "stride"), ("triggers", ["p3"])],
    # one thread per element (cdiv) as written; verification must reject all but 256.
    "fixed_block": [("keep", "smooth_tile256")],
    # one thread per element, its dynamic shared memory scaled with the block, as written.
    "dyn_smem": [("keep", "stencil17_dyn")],
    # --sim (the simulated driver's kernels, tests/simdriver/sim_kernels.c)
    "sim_saxpy": [("keep", "saxpy"), ("idiom", "stride"), ("triggers", ["p0"])],
    "sim_scale2d": [("keep", "scale2d")],
    "sim_block_sum": [("keep", "block_sum")],
    "sim_atomic_sum": [("keep", "atomic_sum"), ("idiom", "stride"), ("tolerance", "p1", "1"),
                       ("triggers", ["p2"])],
    "sim_smem_rev": [("keep", "smem_rev")],
    "sim_vecadd": [("keep", "vecadd")],
}

STEPS = {"keep": keep, "idiom": idiom, "triggers": triggers, "tolerance": tolerance, "name": name}


def cmd_fill(prog, src, dst):
    if prog not in FILLS:
        raise FillError("no fill step for %s" % prog)
    text = open(src).read()
    said = []
    for step in FILLS[prog]:
        text, what = STEPS[step[0]](text, *step[1:])
        said.append(what)
    with open(dst, "w") as f:
        f.write(text)
    print("; ".join(said))


# ------------------------------------------------------------------------------- table

def events(path, kind):
    out = []
    if os.path.exists(path):
        for line in open(path, errors="replace"):
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if isinstance(ev, dict) and ev.get("event") == kind:
                out.append(ev)
    return out


def agree(a, b, how):
    if not (os.path.exists(a) and os.path.exists(b)):
        return None
    x, y = open(a, "rb").read(), open(b, "rb").read()
    if not x or len(x) != len(y):
        return False
    if how == "exact" or x == y:
        return x == y
    _, rtol, atol = how.split(":")
    rtol, atol = float(rtol), float(atol)
    fa = struct.unpack("<%df" % (len(x) // 4), x[:len(x) // 4 * 4])
    fb = struct.unpack("<%df" % (len(y) // 4), y[:len(y) // 4 * 4])
    return all(abs(p - q) <= atol + rtol * abs(q) for p, q in zip(fa, fb))


def ms(c):
    t = c.get("median_ms", c.get("mean_ms")) if c else None
    if t is None:
        return "—"
    return "%.1f µs" % (t * 1000) if t < 1 else "%.3f ms" % t


def label(w):
    if not w:
        return "—"
    if w.get("index") == -1:
        return "program's own"
    return "%s %s×%s" % (w.get("config", "?"), "(%d,%d,%d)" % tuple(w["grid"]), "(%d,%d,%d)" % tuple(w["block"]))


def dims(c):
    return (tuple(c.get("grid", ())), tuple(c.get("block", ())), c.get("shared"))


def idiom_of(stub_text):
    m = re.search(r"Launch idiom: (.*?)\. A block size", re.sub(r"\n    # ", " ", stub_text), re.S)
    if not m:
        return "?"
    why = m.group(1)
    for key, short in (("nothing discover saw", "none fits: grid0 kept"),
                       ("covered", "element (cdiv)"), ("equalled", "rows (grid0)"),
                       ("while p", "grid-stride"), ("followed its block", "element (cdiv)"),
                       ("stayed", "rows (grid0)")):
        if key in why:
            return short
    return why[:40]


def read(path):
    return open(path).read().strip() if os.path.exists(path) else ""


def cmd_table(work):
    rows = []
    ok_all = True
    for line in open(os.path.join(work, "programs.tsv")):
        if line.startswith("#") or not line.strip():
            continue
        prog, kernel, how, hand = line.rstrip("\n").split("\t")[:4]
        hand = "" if hand == "-" else hand
        L = lambda s: os.path.join(work, "logs", "%s.%s" % (prog, s))
        O = lambda s: os.path.join(work, "out", "%s.%s.bin" % (prog, s))
        note = []
        for step in ("base", "disc", "fill", "check", "stub", "hand"):
            rc = read(L(step + ".rc"))
            if read(L(step + ".note")):
                note.append("%s: %s" % (step, read(L(step + ".note"))))
            elif rc and rc != "0":
                err = read(L(step + ".stderr")).splitlines()
                note.append("%s: exit %s%s" % (step, rc, (" (%s)" % err[-1][:120]) if err else ""))
            elif not rc and (step != "hand" or hand):
                note.append("%s: not run" % step)
            if note:
                break  # the steps after it did not run
        stub_text = read(os.path.join(work, "stubs", prog + ".yaml"))  # the program's entry
        st = [e for e in events(L("stub.jsonl"), "tune") if kernel in e.get("name", "")]
        hd = [e for e in events(L("hand.jsonl"), "tune") if kernel in e.get("name", "")]
        sw = st[0]["winner"] if st else None
        hw = hd[0]["winner"] if hd else None
        if not note and st and (st[0].get("untuned") or st[0].get("error")):
            note.append("stub: " + str(st[0].get("untuned") or st[0].get("error")))
        if not note and not st:
            note.append("stub: nothing tuned")
        # the stub's winner in the hand-written policy's space: a hand candidate (or the
        # program's own config) with the same grid, block and shared memory
        inspace = "—"
        if sw and hd:
            pool = [hd[0]["own"]] + hd[0].get("candidates", [])
            same = [c for c in pool if dims(c) == dims(sw)]
            inspace = ("yes (%s there)" % ms(same[0])) if same else "no"
        ratio = "—"
        ts, th = (sw or {}).get("median_ms"), (hw or {}).get("median_ms")
        if ts and th:
            ratio = "%.2f" % (ts / th)
        rej = sum(1 for c in (st[0].get("candidates", []) if st else []) if c.get("status") == "rejected")
        okc = sum(1 for c in (st[0].get("candidates", []) if st else []) if c.get("status") == "ok")
        same_s = agree(O("base"), O("stub"), how)
        same_h = agree(O("base"), O("hand"), how) if hand else None
        mark = "†" if how != "exact" else ""
        outs = {True: "identical" + mark, False: "DIFFER", None: "—"}
        if not note and same_s is not True:
            note.append("stub outputs " + outs[same_s])
        if not note and hand and same_h is not True:
            note.append("hand-written outputs " + outs[same_h])
        if note:
            ok_all = False
        rows.append("| %s | %s | %s | %d ok, %d rejected | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            prog, idiom_of(stub_text), read(L("fill.txt")).replace("|", "/") or "—", okc, rej,
            label(sw), ms(sw), label(hw), ms(hw), ratio, inspace,
            "%s / %s" % (outs[same_s], outs[same_h]), "; ".join(note) or "ok"))
    print("| program | stub's idiom (why: see stubs/) | filled in | stub candidates | stub winner "
          "| its median | hand-written winner | its median | stub / hand | stub winner in the hand "
          "space | outputs vs no shim (stub / hand) | verdict |")
    print("| --- | --- | --- | --- | --- | ---: | --- | ---: | ---: | --- | --- | --- |")
    print("\n".join(rows))
    print("\n† float atomics: compared within rtol/atol (the order of additions varies run to run).")
    return 0 if ok_all else 1


def main(argv):
    try:
        if len(argv) == 5 and argv[1] == "fill":
            cmd_fill(argv[2], argv[3], argv[4])
            return 0
        if len(argv) == 3 and argv[1] == "table":
            return cmd_table(argv[2])
        if len(argv) == 5 and argv[1] == "cmp":
            return 0 if agree(argv[2], argv[3], argv[4]) else 1
    except FillError as e:
        print("stub_fill.py: %s" % e, file=sys.stderr)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
