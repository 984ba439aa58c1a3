#!/usr/bin/env python3
"""launch_walk: counts the rooms a launch walks through, from launch_walk_trace.c's recordings.

    launch_walk.py --root REPO [--seq] [--fold DIR]... LABEL=PREFIX:N ...

Each LABEL=PREFIX:N walks the Nth launch (1, 2, ...) of the program whose recordings are
PREFIX.<pid>.<tag> (tools/dev/launch_walk.sh makes them). A launch is a call into the shim's
launch entry (hook.c's wrapper slot w_LAUNCH_<i>, or the exported cuLaunchKernel[_ptsz])
made from outside the shim; its walk is what its thread ran from that entry to its return.

A room is a source file of the shim, of policy/ or of common/, by its path without the
extension (a header's inline functions are its module's: shim/edge/dispatch.h is
shim/edge/dispatch). Along the walk the thread is in one room at a time; each time it comes
into another room (a call into a function of another file, or a return to a caller in
another file) it begins a stay there. Per room: its stays, of which how many began by a call
(into the room) and how many by a return (back to it); a re-visit is a stay in a room the
walk was in before; the steps are the distinct (room, next room) pairs of the walk (a count
a loop's turns do not change). --fold DIR counts all of DIR's files as one room (DIR relative
to the root: policy, shim/session, ...).
"""
import argparse
import collections
import glob
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile

LAUNCH_ENTRY = re.compile(r"^(w_LAUNCH_\d+|cuLaunchKernel(_ptsz)?)$")
PROGRAM = "(program)"


def load(prefix):
    """The recordings of PREFIX: [(pid, {address: (object, offset)}, events)]."""
    out = []
    for path in sorted(glob.glob(glob.escape(prefix) + ".[0-9]*.0x*")):
        with open(path, "rb") as f:
            data = f.read()
        fns, pos, pid, n = {}, 0, 0, 0
        while True:
            end = data.index(b"\n", pos)
            line = data[pos:end].decode()
            pos = end + 1
            w = line.split(" ")
            if w[0] == "pid":
                pid = int(w[1])
            elif w[0] == "cut" and w[1] != "0":
                sys.exit("launch_walk: %s: the recorder's buffer filled up" % path)
            elif w[0] == "fn":
                fns[int(w[1], 16)] = (w[2], int(w[3], 16))
            elif w[0] == "events":
                n = int(w[1])
                break
        evs = list(struct.iter_unpack("<QII", data[pos:pos + 16 * n]))
        out.append((pid, fns, evs))
    return out


GDB_SCRIPT = r"""
import gdb
with open(OFFSETS) as f, open(OUT, "w") as o:
    for line in f:
        a = int(line, 16)
        b = gdb.block_for_pc(a)
        while b is not None and b.function is None:
            b = b.superblock
        s = b.function if b is not None else None
        o.write("%x\t%s\t%s\n" % (a, s.name if s else "?", s.symtab.filename if s else "?"))
"""


def names(fns, root):
    """{address: (function, room)}: each function's name and the file that declares it (its
    DW_AT_decl_file, asked of gdb: the line table says where the code of a macro's expansion
    or of an inline function's first instruction is, not which file the function is in)."""
    by_obj = collections.defaultdict(list)
    for a, (obj, off) in fns.items():
        by_obj[obj].append((a, off))
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        for obj, items in by_obj.items():
            offs, out = os.path.join(tmp, "offsets"), os.path.join(tmp, "names")
            with open(offs, "w") as f:
                f.writelines("%x\n" % off for _, off in items)
            script = "OFFSETS = %r\nOUT = %r\n" % (offs, out) + GDB_SCRIPT
            subprocess.run(["gdb", "-batch", "-nx", "-ex", "python exec(%r)" % script, obj],
                           capture_output=True, text=True, check=True)
            found = {}
            for line in open(out):
                off, fn, path = line.rstrip("\n").split("\t")
                found[int(off, 16)] = (fn, room_of(path, root))
            for a, off in items:
                res[a] = found.get(off, ("?", "other:?"))
    return res


def room_of(path, root):
    """A source file's room: its path under the root without extension, or "other:<file>"."""
    path = os.path.normpath(path)
    if not path.startswith(root + os.sep):
        return "other:" + os.path.basename(path)
    return os.path.splitext(os.path.relpath(path, root))[0]


def fold(room, folds):
    for d in folds:
        if room == d or room.startswith(d + "/"):
            return d + "/*"
    return room


def find_launch(recs, nth, root):
    """The Nth launch's events, and the names of the functions of its recording."""
    for pid, fns, evs in recs:
        nm = names(fns, root)
        depth = collections.Counter()
        seen = 0
        for i, (a, tid, kind) in enumerate(evs):
            if kind == 1:
                if depth[tid] == 0 and LAUNCH_ENTRY.match(nm.get(a, ("?",))[0]):
                    seen += 1
                    if seen == nth:
                        return launch_events(evs, i, tid), nm, pid
                depth[tid] += 1
            else:
                depth[tid] -= 1
    sys.exit("launch_walk: no launch %d in %d recording(s)" % (nth, len(recs)))


def launch_events(evs, start, tid):
    """The events of tid from evs[start] (the entry) to the entry's exit."""
    out, depth = [], 0
    for a, t, kind in evs[start:]:
        if t != tid:
            continue
        out.append((a, kind))
        depth += 1 if kind == 1 else -1
        if depth == 0:
            return out
    sys.exit("launch_walk: a launch with no return")


def walk(events, nm, folds):
    """The walk's stays, as [(room, how)], how "call" or "return"; and the functions entered."""
    stack, stays, calls = [], [], 0
    cur = PROGRAM
    for a, kind in events:
        room = fold(nm[a][1], folds)
        if kind == 1:
            calls += 1
            stack.append((a, room))
            if room != cur:
                stays.append((room, "call"))
                cur = room
        else:
            top, _ = stack.pop()
            if top != a:
                sys.exit("launch_walk: unbalanced: exit of %s in %s" % (nm[a][0], nm[top][0]))
            back = stack[-1][1] if stack else PROGRAM
            if back != cur and back != PROGRAM:
                stays.append((back, "return"))
            cur = back
    return stays, calls


def summary(stays):
    seen, per = set(), collections.OrderedDict()
    revisits = 0
    for room, how in stays:
        s = per.setdefault(room, [0, 0, 0])
        s[0] += 1
        s[1 if how == "call" else 2] += 1
        revisits += room in seen
        seen.add(room)
    return per, revisits


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # a pager or head that closes early
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--seq", action="store_true", help="print each walk's rooms in order")
    ap.add_argument("--fold", action="append", default=[], help="count DIR as one room")
    ap.add_argument("walks", nargs="+", metavar="LABEL=PREFIX:N")
    a = ap.parse_args()
    root = os.path.realpath(a.root)
    folds = [f.strip("/") for f in a.fold]
    results = []
    for spec in a.walks:
        label, rest = spec.split("=", 1)
        prefix, nth = rest.rsplit(":", 1)
        events, nm, _ = find_launch(load(prefix), int(nth), root)
        stays, calls = walk(events, nm, folds)
        results.append((label, stays, calls))
    print("| walk | rooms | stays | by call | by return | re-visits | steps | functions entered |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, stays, calls in results:
        per, rev = summary(stays)
        steps = len(set(zip([PROGRAM] + [r for r, _ in stays], [r for r, _ in stays])))
        print("| %s | %d | %d | %d | %d | %d | %d | %d |" % (
            label, len(per), len(stays), sum(v[1] for v in per.values()),
            sum(v[2] for v in per.values()), rev, steps, calls))
    rooms = []
    for _, stays, _ in results:
        for r, _ in stays:
            if r not in rooms:
                rooms.append(r)
    print("\nstays per room (by call + by return):\n")
    print("| room | " + " | ".join(r[0] for r in results) + " |")
    print("| --- |" + " ---: |" * len(results))
    for room in rooms:
        cells = []
        for _, stays, _ in results:
            per, _ = summary(stays)
            v = per.get(room)
            cells.append("%d (%d+%d)" % tuple(v) if v else "")
        print("| %s | %s |" % (room, " | ".join(cells)))
    if a.seq:
        for label, stays, _ in results:
            print("\n%s: %s" % (label, " > ".join(r for r, _ in stays)))


if __name__ == "__main__":
    main()
