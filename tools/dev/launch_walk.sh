#!/usr/bin/env bash
# Walks a launch through the shim's source files ("rooms": shim/<folder>/<file>, policy/,
# common/) and prints, for each walk, the rooms it stays in and how often it comes back
# (issue 47; method and numbers in docs/architecture.md, "The launch, walked").
#
#   tools/dev/launch_walk.sh [--seq] [--fold DIR]...
#
# It builds the shim, the trial helper, app_rt and the simulated driver in a build folder of
# its own ($XMT_WALK_BUILD, default build-walk/: RelWithDebInfo, the same flags as build/,
# plus -finstrument-functions on everything but tests/, tools/ and system headers), with
# launch_walk_trace.c's recorder linked into each object; runs tests/integration's app_rt on
# the simulated driver as cases.py's run() does (XMATUNE_WARMUP_MS=0, XMATUNE_CACHE=off,
# the policies of tests/integration/policies); and gives the recordings to launch_walk.py,
# which counts from the interposed launch entry (hook.c's wrapper slot, as the runtime-like
# app_rt fetches cuLaunchKernel through cuGetProcAddress) to its return, on the launching
# thread of the program's process only. The walks:
#   a-inline  the first launch of a new key, tuned in the program (XMATUNE_TRIALS=inline)
#   a-helper  the same with the default trial helper: the program's side only
#   b-recheck the second launch of that key, decided by the first: the winner's first
#             re-check (XMATUNE_RECHECKS, default 4: at the next launch, then 8 later, ...)
#   b-hit     its third launch: the decided key's memo hit
#   c-first   the first launch of a kernel no policy names (its record made: pass-through)
#   c-pass    its second launch (the fast path)
# --seq prints each walk's sequence of rooms; --fold DIR (policy, common, shim/session, ...)
# counts every file under DIR as one room. Needs gcc, gdb and python3; no GPU. About a minute
# the first time (its build), seconds after.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${XMT_WALK_BUILD:-$ROOT/build-walk}
mkdir -p "$BUILD"
REC=$BUILD/launch_walk_trace.o
cc -O2 -fPIC -fvisibility=hidden -Wall -Wextra -Werror -c "$ROOT/tools/dev/launch_walk_trace.c" \
    -o "$REC.new"
# the objects link it through their flags, which make no dependency: a changed recorder
# relinks them by their going
if ! cmp -s "$REC.new" "$REC"; then
    mv "$REC.new" "$REC"
    rm -f "$BUILD"/shim/libxmatune.so* "$BUILD/trial/xmatune-trial" \
        "$BUILD/tests/integration/app_rt" "$BUILD"/simdriver/libcuda.so*
fi
rm -f "$REC.new"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_C_FLAGS=-finstrument-functions -finstrument-functions-exclude-file-list=/usr/,$ROOT/tests/,$ROOT/tools/" \
    "-DCMAKE_EXE_LINKER_FLAGS=$REC" "-DCMAKE_SHARED_LINKER_FLAGS=$REC" >/dev/null
nice cmake --build "$BUILD" -j2 --target xmatune xmatune-trial app_rt simcuda >/dev/null

WORK=$(mktemp -d "${TMPDIR:-/tmp}/launch_walk.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# one run of app_rt's saxpy: run NAME ITERATIONS POLICY-DIR [VAR=VALUE...]
run() {
    local name=$1 iters=$2 pol=$3
    shift 3
    env -i PATH="$PATH" HOME="$WORK" XDG_CACHE_HOME="$WORK/xdg" \
        LD_LIBRARY_PATH="$BUILD/simdriver" LD_PRELOAD="$BUILD/shim/libxmatune.so" \
        XMATUNE_POLICY="$pol" XMATUNE_WARMUP_MS=0 XMATUNE_CACHE=off \
        XMT_WALK_OUT="$WORK/$name" "$@" \
        "$BUILD/tests/integration/app_rt" saxpy "$WORK/$name.out" "$iters" \
        >"$WORK/$name.stdout" 2>"$WORK/$name.stderr" ||
        { echo "launch_walk: $name failed:" >&2; cat "$WORK/$name.stderr" >&2; exit 1; }
}
POL=$ROOT/tests/integration/policies
NONE=$ROOT/tests/integration/policies_optin # smem_rev only: no entry names saxpy
run inline 3 "$POL" XMATUNE_TRIALS=inline
run helper 1 "$POL"
run pass 2 "$NONE"

python3 "$ROOT/tools/dev/launch_walk.py" --root "$ROOT" "$@" \
    "a-inline=$WORK/inline:1" "a-helper=$WORK/helper:1" "b-recheck=$WORK/inline:2" \
    "b-hit=$WORK/inline:3" \
    "c-first=$WORK/pass:1" "c-pass=$WORK/pass:2"
