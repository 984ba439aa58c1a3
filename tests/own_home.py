#!/usr/bin/env python3
"""Every test runs with a HOME and an XDG_CACHE_HOME of its own (tests/CMakeLists.txt): the
ctest fixture `suite_home` around the whole suite.

  own_home.py setup HOMES NAMES_FILE   make HOMES/<test> afresh for every test named in
                                       NAMES_FILE, and record the state of the real default
                                       cache folder (the caller's $XDG_CACHE_HOME/xmatune,
                                       else ~/.cache/xmatune) in HOMES/real-cache-before.json
  own_home.py check HOMES              fail when that folder changed since: a test wrote
                                       into the user's real cache (issue 50, item 2)

The fixture's two tests run with the caller's environment (they are the only ones): they
look at the real home, never write to it. Another program of the same user that uses the
default cache while the suite runs changes it too; the failure lists what changed, so that
such a writer can be told from a test.
"""
import json
import os
import shutil
import stat
import sys


def real_cache_dir():
    """The folder the shim's default cache is in (common/cachefile.c's rule), or None."""
    xdg, home = os.environ.get("XDG_CACHE_HOME", ""), os.environ.get("HOME", "")
    if xdg.startswith("/"):
        return os.path.join(xdg, "xmatune")
    if home.startswith("/"):
        return os.path.join(home, ".cache", "xmatune")
    return None


def snapshot(d):
    """{relative path: [type, size, mtime_ns, inode]} of everything under d; {} when d is
    missing (so a folder made by a test shows as new files)."""
    state = {}
    if d is None or not os.path.lexists(d):
        return state
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(root, n)
            st = os.lstat(p)
            kind = "dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"
            state[os.path.relpath(p, d)] = [kind, st.st_size if kind == "file" else 0,
                                            st.st_mtime_ns, st.st_ino]
    state["."] = ["dir", 0, os.lstat(d).st_mtime_ns, os.lstat(d).st_ino]
    return state


def setup(homes, names_file):
    def writable(fn, p, _):  # a test may leave a folder without write permission
        os.chmod(os.path.dirname(p), 0o700)
        fn(p)
    if os.path.lexists(homes):
        shutil.rmtree(homes, onerror=writable)
    with open(names_file) as f:
        for name in f.read().split():
            os.makedirs(os.path.join(homes, name, ".cache"))
    d = real_cache_dir()
    before = {"dir": d, "state": snapshot(d)}
    with open(os.path.join(homes, "real-cache-before.json"), "w") as f:
        json.dump(before, f)
    print("the real default cache's folder: %s (%s)" %
          (d, "%d entries" % len(before["state"]) if before["state"] else "absent"))
    return 0


def check(homes):
    with open(os.path.join(homes, "real-cache-before.json")) as f:
        before = json.load(f)
    d = before["dir"]
    if d is None:
        print("no absolute XDG_CACHE_HOME or HOME: there is no real default cache to check")
        return 0
    was, now = before["state"], snapshot(d)
    changed = sorted(set(was) | set(now))
    changed = [p for p in changed if was.get(p) != now.get(p)]
    if not changed:
        print("%s: unchanged by the suite (%s)" % (d, "%d entries" % len(now) if now else "absent"))
        return 0
    print("FAIL: the suite changed the real default cache's folder %s:" % d)
    for p in changed:
        a, b = was.get(p), now.get(p)
        what = "new" if a is None else "removed" if b is None else \
            "%d -> %d bytes" % (a[1], b[1]) if a[1] != b[1] else "rewritten"
        print("  %s: %s" % (p, what))
        full = os.path.join(d, p)
        if b and b[0] == "file" and (a is None or b[1] > a[1]) and p.endswith(".jsonl"):
            with open(full, "rb") as f:
                f.seek(a[1] if a else 0)
                added = f.read().decode(errors="replace").splitlines()
            print("    %d record(s) added, the first: %s" % (len(added), added[0][:300] if added else ""))
    print("Every test must run with a cache of its own (tests/own_home.cmake gives each a HOME "
          "and an XDG_CACHE_HOME). A program outside the suite that used or removed the "
          "default cache meanwhile changes it too: records added that the suite's programs "
          "did not make, or a folder removed, are another's (run again to tell).")
    return 1


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "setup":
        sys.exit(setup(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2]))
    sys.exit("usage: own_home.py setup HOMES NAMES_FILE | check HOMES")
