#!/usr/bin/env python3
"""The hostile-input catalogue (issue 11, item 7): tests/hostile/*.case, one ctest test each.

Each case runs tests/integration/app_rt's saxpy scenario on the simulated driver once
without the shim and once with it and the case's environment, and checks that the
program's output bytes, its stdout and its return code are unchanged, that every line the
case expects is on stderr, and that the run with the shim used under a second more CPU
time than the run without it (CPU time, which other work on a busy machine does not
lengthen as it does wall time; a hang, which may use none, is killed after 60 s).

A case file, lines of `key: value` (# starts a comment):
  env:    VAR=VALUE ...   the environment added to the run with the shim
  expect: TEXT            a substring stderr must contain (any number of these lines)
  absent: TEXT            a substring stderr must not contain
  rc: N                   the return code expected with the shim (default: as without it)
  output: any             do not compare outputs (a run that is meant to stop early)
  known: WHY              a known failure not fixed yet: the case is skipped (ctest shows
                          it as skipped, with WHY); XMT_HOSTILE_KNOWN=1 runs it anyway
  run:    SCENARIO ARGS   app_rt's scenario and its arguments after OUT (default: saxpy 3)
Placeholders, in env and expect: @fifo (a FIFO nobody opens), @dir (an empty folder),
@fifo_dir (a folder whose a.yaml is a FIFO), @work (the case's scratch folder), @shim,
@policies (tests/integration/policies), @huge_policy (3 MiB), @deep_lists (kernels:
[[[... 500,000 levels), @deep_maps ({a: {a: ... 200,000 levels), @huge_cache (20 MB of
lines that are not records), @deep_cache (one line of 500,000 nested lists),
@long_globs (100,000 characters), @long_pid_path (3,000 x %p), @locked_cache (a cache
whose lock this script holds, exclusive, while the case runs), @symlink_cache (a symbolic
link to a cache file), @newer_cache (a record of a newer format version), @bsum_warmup (a
policy tuning block_sum's block size with its grid kept: a block of 512 is wrong, and the
fastest, and gives the right sums on data that cannot tell), @rows_past_end (a policy
whose one config launches row_max with 528 blocks for the rowmax scenario's 512 rows: its
last blocks read and write past the buffers), @saxpy_undeclared (the saxpy policy without
its restore: and verify: lists: protected by protect: auto, nothing declared).

usage: hostile.py CASE_FILE      (paths from the environment, as for cases.py)
The one-second limit is for release builds. Under the sanitizers (XMT_PRELOAD_PREFIX set:
Debug builds with ASan or TSan, 10-60 times slower at reading a 20 MB file) it is 10 s.
"""
import os
import resource
import shutil
import shlex
import subprocess
import sys

SKIP = 77  # ctest SKIP_RETURN_CODE

SHIM = os.environ["XMT_SHIM"]
PRELOAD = os.environ.get("XMT_PRELOAD_PREFIX", "") + SHIM
SIMDIR = os.environ["XMT_SIMDIR"]
APP = os.environ["XMT_APP_RT"]
POLICIES = os.environ["XMT_POLICIES"]
LIMIT_S = 10.0 if os.environ.get("XMT_PRELOAD_PREFIX") else 1.0
HANG_S = 60  # only tells a hang from a slow or busy machine


def parse(path):
    case = {"env": [], "expect": [], "absent": [], "rc": None, "output": "same", "known": None,
            "run": ["saxpy", "3"]}
    for line in open(path):
        line = line.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip() if key.strip() != "expect" else value[1:]
        if key == "env":
            case["env"] += shlex.split(value)
        elif key in ("expect", "absent"):
            case[key].append(value)
        elif key == "rc":
            case["rc"] = int(value)
        elif key in ("output", "known"):
            case[key] = value
        elif key == "run":
            case["run"] = shlex.split(value)
        else:
            raise SystemExit("%s: unknown key %r" % (path, key))
    return case


HELD = []  # files whose flock a case holds


def make_inputs(work, used):
    """The placeholders' files that the case uses (the text of its env and expect)."""
    p = {"@work": work, "@shim": SHIM, "@policies": POLICIES}

    def path(name):
        return os.path.join(work, name)

    p["@fifo"] = path("fifo")
    if not os.path.exists(p["@fifo"]):
        os.mkfifo(p["@fifo"])
    p["@dir"] = path("dir")
    os.makedirs(p["@dir"], exist_ok=True)
    p["@fifo_dir"] = path("fifo_dir")
    os.makedirs(p["@fifo_dir"], exist_ok=True)
    if not os.path.exists(path("fifo_dir/a.yaml")):
        os.mkfifo(path("fifo_dir/a.yaml"))
    files = {
        "@huge_policy": ("huge.yaml", lambda: "kernels:\n" + "#" * (3 << 20) + "\n"),
        "@deep_lists": ("deep_lists.yaml", lambda: "kernels: " + "[" * 500000 + "]" * 500000 + "\n"),
        "@deep_maps": ("deep_maps.yaml", lambda: "kernels: " + "{a: " * 200000 + "1" + "}" * 200000 + "\n"),
        "@huge_cache": ("huge_cache.jsonl", lambda: ('{"x": "' + "y" * 1000 + '"}\n') * 20000),
        "@deep_cache": ("deep_cache.jsonl", lambda: "[" * 500000 + "]" * 500000 + "\n"),
        "@bsum_warmup": ("bsum_warmup.yaml", lambda: "kernels:\n  - match: block_sum\n"
                         "    params: [in, out, n]\n    triggers: [n]\n"
                         "    space: {BLOCK: [128, 256, 512]}\n"
                         "    launch: {grid: [\"cdiv(n, 256)\"], block: [BLOCK]}\n"),
        "@rows_past_end": ("rows_past_end.yaml", lambda: "kernels:\n  - match: row_max\n"
                           "    params: [x: ptr, out: ptr, ncols: i32]\n"
                           "    configs:\n      - launch: {grid: [528], block: [256]}\n"),
        "@saxpy_undeclared": ("saxpy_undeclared.yaml", lambda: "".join(
            l for l in open(os.path.join(POLICIES, "saxpy.yaml"))
            if not l.lstrip().startswith(("restore:", "verify:")))),
    }
    for key, (name, text) in files.items():
        p[key] = path(name)
        # written anew for every run: a tuning run compacts a cache it writes to, so a
        # work folder left by an earlier run holds a one-record cache, not the hostile one
        if key in used:
            with open(p[key], "w") as f:
                f.write(text())
    if "@locked_cache" in used:
        import fcntl
        p["@locked_cache"] = path("locked.jsonl")
        held = open(p["@locked_cache"] + ".lock", "a+")
        fcntl.flock(held, fcntl.LOCK_EX)  # released when this script exits
        HELD.append(held)
    p["@symlink_cache"] = path("symlink.jsonl")
    if "@symlink_cache" in used and not os.path.islink(p["@symlink_cache"]):
        open(path("symlinked.jsonl"), "a").close()
        os.symlink(path("symlinked.jsonl"), p["@symlink_cache"])
    p["@newer_cache"] = path("newer.jsonl")
    if "@newer_cache" in used:
        with open(p["@newer_cache"], "w") as f:
            f.write('{"v":3,"device":"d","kernel":"k","entry":"e","key":"00","index":2}\n')
    p["@long_globs"] = "*" * 100000
    p["@long_pid_path"] = "%p" * 3000
    return p


def subst(s, p):
    # Longest first: @fifo_dir before @fifo.
    for k in sorted(p, key=len, reverse=True):
        s = s.replace(k, p[k])
    return s


def run(work, tag, env_add, shim, scenario):
    out = os.path.join(work, tag + ".out")
    if os.path.exists(out):
        os.remove(out)
    e = {k: v for k, v in os.environ.items() if not k.startswith(("XMATUNE_", "SIMCUDA_"))}
    e["LD_LIBRARY_PATH"] = SIMDIR
    e.pop("LD_PRELOAD", None)
    e["XDG_CACHE_HOME"] = os.path.join(work, tag + ".xdg")  # the default cache: never the home
    shutil.rmtree(e["XDG_CACHE_HOME"], ignore_errors=True)
    if shim:
        e["LD_PRELOAD"] = PRELOAD
        e["XMATUNE_WARMUP_MS"] = "0"
        e.update(env_add)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        p = subprocess.run([APP, scenario[0], out] + scenario[1:], env=e, capture_output=True,
                           timeout=HANG_S)
        rc, so, se = p.returncode, p.stdout, p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired as x:
        rc, so, se = "timeout", x.stdout or b"", (x.stderr or b"").decode(errors="replace")
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the child was waited for: it counts
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    data = open(out, "rb").read() if os.path.exists(out) else b""
    return rc, data, so, se, cpu


def main():
    path = sys.argv[1]
    name = os.path.basename(path)[:-len(".case")]
    case = parse(path)
    if case["known"] and os.environ.get("XMT_HOSTILE_KNOWN") != "1":
        print("%s: skipped, a known failure: %s" % (name, case["known"]))
        return SKIP
    work = os.environ.get("XMT_WORK") or "/tmp/xmt-hostile-" + name
    os.makedirs(work, exist_ok=True)
    p = make_inputs(work, " ".join(case["env"] + case["expect"] + case["absent"]))
    env_add = {}
    for kv in case["env"]:
        k, _, v = kv.partition("=")
        env_add[k] = subst(v, p)
    brc, bdata, bso, _, bcpu = run(work, name + "-base", {}, False, case["run"])
    rc, data, so, se, cpu = run(work, name, env_add, True, case["run"])
    fails = []
    want_rc = case["rc"] if case["rc"] is not None else brc
    if rc != want_rc:
        fails.append("return code %s, expected %s" % (rc, want_rc))
    if case["output"] == "same":
        if not bdata or data != bdata:
            fails.append("output differs (%d vs %d bytes)" % (len(data), len(bdata)))
        if [l for l in so.splitlines() if not l.startswith(b"SHIM_SAW")] != bso.splitlines():
            fails.append("stdout differs:\n%s\nvs\n%s" % (so.decode(errors="replace"), bso.decode()))
    for text in case["expect"]:
        if subst(text, p) not in se:
            fails.append("stderr lacks %r" % subst(text, p)[:300])
    for text in case["absent"]:
        if subst(text, p) in se:
            fails.append("stderr has %r" % subst(text, p)[:300])
    if rc == "timeout":
        fails.append("still running after %d s: killed" % HANG_S)
    elif cpu - bcpu > LIMIT_S:
        fails.append("used %.2f s of CPU (%.2f s without the shim; limit: %.0f s more)" % (cpu, bcpu, LIMIT_S))
    print("%s: %.3f s of CPU with the shim, %.3f s without" % (name, cpu, bcpu))
    if fails:
        print("FAIL %s:\n  %s\nstderr:\n%s" % (name, "\n  ".join(fails), se[:4000]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
