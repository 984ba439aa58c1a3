#!/usr/bin/env python3
"""Pass-through costs pass-through (issue 48, item 5), by callgrind count.

Each case runs launch_cost (launch_cost.c) on the simulated driver under
`valgrind --tool=callgrind`, counting the instructions of its two launch loops (COUNT and
2 x COUNT launches after a warm-up in which the shim decides, tunes, reaches its caps):
instructions per launch = (Ir(loop b) - Ir(loop a)) / COUNT. A count, not a time: the same
on a busy machine. Each case is compared with the plain pass-through (the shim, a policy
that does not name vecadd) launched the same way: the same entry point, handle kind,
dims and sequence of scalars, so that the simulated driver's own cost cancels.

Bounds (docs/benchmarks.md, "Pass-through costs pass-through"):
- ROUTED: a kernel auto stopped tuning (past XMATUNE_AUTO_MAX_KEYS, under
  XMATUNE_AUTO_MIN_US, excluded) must take the pass-through path itself: at most
  ROUTED_IR over it (the same code; past the cap the simulated driver's own free() costs 2
  more, its heap left otherwise by the tuning before).
- OWN: a key decided "keep the program's own config" is served by the per-thread memo, which
  compares the arguments a decision reads: at most OWN_IR over the pass-through. 2 % of the
  H100's 2,950 ns launch is 59 ns. The memo's hit paths, at +215 to +267 instructions over
  the pass-through, ran at 0.979-0.996 of the driver's launch rate in one process on the
  H200 (docs/benchmarks.md, "H200 launch rate"): 300 instructions is about the 2 % line on
  those hosts (not below it with a margin), where a memo miss (the key derived and looked
  up under the lock: +950 to +1,300) is 3-4x past it.

- REMOTE: with the fleet's tier on (XMATUNE_CACHE_REMOTE, a real redis-server), the shim's
  own instructions in the loops are those of the same case without it: 0 more.

usage: launch_cost.py [CASE...|remote]  (environment: XMT_SHIM, XMT_SIMDIR, XMT_LAUNCH_COST, XMT_WORK,
XMT_POLICIES_COST); exits 77 (skipped) without valgrind or in a sanitized build.
"""
import json
import os
import shutil
import subprocess
import sys

ROUTED_IR = 8
OWN_IR = 300
COUNT = 2000
WARMUP = 100  # every case's -w

SHIM = os.environ["XMT_SHIM"]
SIMDIR = os.environ["XMT_SIMDIR"]
PROG = os.environ["XMT_LAUNCH_COST"]
WORK = os.environ["XMT_WORK"]
POL = os.environ["XMT_POLICIES_COST"]

AUTO = {"XMATUNE_AUTO": "1", "XMATUNE_WARMUP_MS": "0", "XMATUNE_RECHECKS": "0"}
POLICY = {"XMATUNE_WARMUP_MS": "0", "XMATUNE_RECHECKS": "0"}
PLAIN = {"XMATUNE_MODE": "tune", "XMATUNE_POLICY": os.path.join(POL, "other_kernel.yaml")}
MANY = "1000000"  # -v: a scalar that changes at every launch


def ir_per_launch(name, env, args):
    """(instructions per launch, the run's log events, its stderr)."""
    out = os.path.join(WORK, "cg." + name)
    log = os.path.join(WORK, "log." + name)
    for f in (out, log):
        if os.path.exists(f):
            os.remove(f)
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("XMATUNE_", "SIMCUDA_")) and k != "LD_PRELOAD"}
    e.update({"LD_LIBRARY_PATH": SIMDIR, "XMATUNE_CACHE": "off", "XMATUNE_VERBOSE": "0"})
    if env is not None:
        e.update({"LD_PRELOAD": SHIM, "XMATUNE_LOG": log})
        e.update(env)
    cmd = ["valgrind", "--tool=callgrind", "--toggle-collect=launch_loop_a",
           "--toggle-collect=launch_loop_b", "--callgrind-out-file=" + out,
           PROG, "-n", str(COUNT)] + args
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit("launch_cost.py: %s failed (%d):\n%s" % (name, p.returncode, p.stderr[-3000:]))
    a = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--auto=no", out],
                       capture_output=True, text=True, check=True).stdout
    ir = {}
    for line in a.splitlines():
        for fn in ("launch_loop_a", "launch_loop_b"):
            if ":" + fn + " " in line:
                ir[fn] = int(line.split()[0].replace(",", ""))
    if len(ir) != 2:
        sys.exit("launch_cost.py: %s: no launch loops in callgrind's output:\n%s" % (name, a))
    events = []
    if os.path.exists(log):
        with open(log) as f:
            events = [json.loads(x) for x in f if x.strip()]
    return (ir["launch_loop_b"] - ir["launch_loop_a"]) / COUNT, events, p.stderr


def tunes(events):
    return [ev for ev in events if ev.get("event") == "tune" and ev.get("kernel") == "vecadd"]


def summary(events):
    s = [ev for ev in events if ev.get("event") == "kernel_summary" and ev.get("kernel") == "vecadd"]
    return s[0] if s else {}


def capped(cap):
    def check(events, err):
        return (len(tunes(events)) == cap and "%d keys tuned (XMATUNE_AUTO_MAX_KEYS)" % cap in err,
                "%d keys tuned, then the cap" % cap)
    return check


def capped_waiting(cap):
    def check(events, err):
        # the first key is queued or, where the pool's warm-up still held the queue's one
        # place, waits too: either way the cap comes with keys waiting
        said = "%d keys tuned or waiting for room in the background queue" % cap
        return (not tunes(events) and said in err, "%d keys queued or waiting, then the cap" % cap)
    return check


def too_short(events, err):
    # one key tuned of the 6,100 the launches made: the rest passed through
    return (len(tunes(events)) == 1, "one key tuned, then passed through as too short")


def untouched(events, err):
    return (not tunes(events), "no key tuned")


def all_own(keys):
    def check(events, err):
        t = tunes(events)
        kept = {ev["key"] for ev in t if (ev.get("winner") or {}).get("index") == -1}
        s = summary(events)
        # every launch counted, as passed through (the memo's own ways count too)
        n = WARMUP + 3 * COUNT
        return (len(t) == keys and len(kept) == keys and s.get("rewritten", 1) == 0 and
                s.get("launches") == n and s.get("passed_through") == n,
                "%d keys, each decided: the program's own config; %d launches passed through"
                % (keys, n))
    return check


# name, what, environment, launch_cost's arguments, bound, what the run's log must show
CASES = []
for entry in ("launch", "ptsz", "ex", "exptsz"):
    CASES.append(("a_capped_" + entry, "(a) auto past XMATUNE_AUTO_MAX_KEYS (2), scalar new at every "
                  "launch, " + entry, dict(AUTO, XMATUNE_AUTO_MAX_KEYS="2", XMATUNE_AUTO_MIN_US="0"),
                  ["-w", "100", "-v", MANY, "-e", entry], ROUTED_IR, capped(2)))
CASES += [
    ("a_capped_function", "(a) the same, a CUfunction handle (cuLaunchKernel)",
     dict(AUTO, XMATUNE_AUTO_MAX_KEYS="2", XMATUNE_AUTO_MIN_US="0"),
     ["-w", "100", "-v", MANY, "-f"], ROUTED_IR, capped(2)),
    ("a_capped_background_full", "(a) auto in the background, its queue full (1, the helper "
     "held), scalar new at every launch: keys waiting for room count against the cap (2)",
     dict(AUTO, XMATUNE_AUTO_MAX_KEYS="2", XMATUNE_AUTO_MIN_US="0", XMATUNE_TUNING="background",
          XMATUNE_BACKGROUND_QUEUE="1", SIMCUDA_HOLD_HELPER="vecadd:1:1:" + os.path.join(WORK, "never")),
     ["-w", "100", "-v", MANY, "-W"], ROUTED_IR, capped_waiting(2)),
    ("b_too_short", "(b) auto: the kernel under XMATUNE_AUTO_MIN_US, scalar new at every launch",
     dict(AUTO, XMATUNE_AUTO_MIN_US="1000000"), ["-w", "100", "-v", MANY], ROUTED_IR, too_short),
    ("b_excluded", "(b) auto: the kernel excluded (XMATUNE_EXCLUDE), scalar new at every launch",
     dict(AUTO, XMATUNE_EXCLUDE="vecadd"), ["-w", "100", "-v", MANY], ROUTED_IR, untouched),
    ("c_own_policy", "(c) policy, one key (n not in it) kept own, n new at every launch",
     dict(POLICY, XMATUNE_POLICY=os.path.join(POL, "vecadd_own.yaml")),
     ["-w", "100", "-b", "128", "-v", MANY], OWN_IR, all_own(1)),
    ("c_own_auto", "(c) auto, one key kept own (block 128), n fixed",
     dict(AUTO, XMATUNE_AUTO_MIN_US="0"), ["-w", "100", "-b", "128"], OWN_IR, all_own(1)),
    ("d_own_policy_4keys", "(d) policy keyed on n, 4 keys in turn, each kept own",
     dict(POLICY, XMATUNE_POLICY=os.path.join(POL, "vecadd_own_keyed.yaml")),
     ["-w", "100", "-b", "128", "-v", "4"], OWN_IR, all_own(4)),
    ("d_own_auto_4keys", "(d) auto, 4 keys in turn (n), each kept own (block 128)",
     dict(AUTO, XMATUNE_AUTO_MIN_US="0"), ["-w", "100", "-b", "128", "-v", "4"], OWN_IR, all_own(4)),
    ("d_own_auto_8keys", "(d) auto, 8 keys in turn (XMATUNE_AUTO_MAX_KEYS), each kept own",
     dict(AUTO, XMATUNE_AUTO_MIN_US="0"), ["-w", "100", "-b", "128", "-v", "8"], OWN_IR, all_own(8)),
]


def shim_ir(name):
    """The shim's own instructions (exclusive: libxmatune.so's functions, and the lines of
    shim/ inlined elsewhere) in run name's launch loops."""
    a = subprocess.run(["callgrind_annotate", "--inclusive=no", "--auto=no", "--threshold=100",
                        os.path.join(WORK, "cg." + name)], capture_output=True, text=True,
                       check=True).stdout
    return sum(int(l.split()[0].replace(",", "")) for l in a.splitlines()
               if l.strip()[:1].isdigit() and ("libxmatune.so]" in l or
                                                  os.sep + "shim" + os.sep in l))


def remote_tier():
    """The fleet's tier (XMATUNE_CACHE_REMOTE, a real redis-server) adds nothing to the launch
    path: the shim's own instructions in the launch loops are the same with it as without
    (case (c)'s key, kept own, served by the memo). The whole loop costs more with it, in the
    C library only: the tier's thread makes the process multi-threaded, and the simulated
    driver's calls into the C library take their multi-threaded paths (a program that starts
    a thread of its own pays the same, as a sleeping thread preloaded beside the shim shows).
    A row, or None (and a message) without redis-server."""
    if not shutil.which("redis-server"):
        print("launch_cost.py: no redis-server (scripts/deps.sh installs it): the remote tier's "
              "case is skipped")
        return None, None
    import socket
    import time
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    srv = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                            "--appendonly", "no", "--dir", WORK],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(500):
            try:
                socket.create_connection(("127.0.0.1", port), 0.1).close()
                break
            except OSError:
                time.sleep(0.02)
        env = dict(POLICY, XMATUNE_POLICY=os.path.join(POL, "vecadd_own.yaml"))
        args = ["-w", "100", "-b", "128", "-v", MANY]
        off, ev_off, _ = ir_per_launch("remote_off", env, args)
        on, ev_on, err = ir_per_launch(
            "remote_on", dict(env, XMATUNE_CACHE_REMOTE="redis://127.0.0.1:%d/lc" % port,
                              XMATUNE_VERBOSE="1"), args)
    finally:
        srv.kill()
        srv.wait()
    n = 3 * COUNT
    a, b = shim_ir("remote_off") / n, shim_ir("remote_on") / n
    good = "the remote cache" in err and "connected" in err and all_own(1)(ev_on, err)[0]
    row = "| the remote tier on (a real redis-server), case (c): the shim's own Ir | — | %.1f | %.1f | %+.1f | 0 | %s |" % (
        a, b, b - a, "ok" if good and b == a else "FAIL")
    if not good:
        return row, "remote_on: its run is not what it stands for (connected, one key kept own):\n" + err[-2000:]
    if b != a:
        return row, "the remote tier: %+.1f of the shim's own instructions per launch" % (b - a)
    return row, None


def main():
    if not shutil.which("valgrind") or not shutil.which("callgrind_annotate"):
        print("launch_cost.py: no valgrind (scripts/deps.sh installs it): skipped")
        return 77
    with open(SHIM, "rb") as f:
        data = f.read()
        if b"__asan_init" in data or b"__tsan_init" in data:
            print("launch_cost.py: a sanitized shim: instruction counts mean nothing there: skipped")
            return 77
    os.makedirs(WORK, exist_ok=True)
    only = sys.argv[1:]
    base = {}
    rows, failed = [], []
    for name, what, env, args, bound, check in CASES:
        if only and name not in only:
            continue
        b = tuple(a for a in args if a != "100" and a != "-w")
        if b not in base:
            base[b] = (ir_per_launch("direct" + str(len(base)), None, list(args))[0],
                       ir_per_launch("plain" + str(len(base)), PLAIN, list(args))[0])
        direct, plain = base[b]
        ir, events, err = ir_per_launch(name, env, args)
        good, said = check(events, err)
        over = ir - plain
        ok = good and over <= bound
        rows.append("| %s | %.1f | %.1f | %.1f | %+.1f | %d | %s |" % (
            what, direct, plain, ir, over, bound, "ok" if ok else "FAIL"))
        if not good:
            failed.append("%s: its run is not what it stands for (%s):\n%s" % (name, said, err[-2000:]))
        elif over > bound:
            failed.append("%s: %+.1f instructions per launch over the pass-through, bound %d" %
                          (name, over, bound))
    if not only or "remote" in only:
        row, bad = remote_tier()
        if row:
            rows.append(row)
        if bad:
            failed.append(bad)
    print("| case | direct Ir | pass-through Ir | case Ir | over pass-through | bound | |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    print("\n".join(rows))
    for f in failed:
        print("launch_cost.py: " + f)
    if failed:
        return 1
    print("launch_cost.py: every case within its bound")
    return 0


if __name__ == "__main__":
    sys.exit(main())
