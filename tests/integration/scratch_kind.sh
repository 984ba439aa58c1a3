#!/usr/bin/env bash
# The checklist "To add an entry point" (docs/architecture.md), checked mechanically: in a
# scratch copy of shim/, add rows to entries.h and signatures.h and compile every shim
# file that uses them, with the build's warnings as errors.
#   - an entry point of an existing signature: one row in entries.h, and it compiles;
#   - a new pass-through signature: one row in signatures.h, and it compiles;
#   - a new launch signature alone: the build fails, naming what is missing (its
#     xmt_launch_of_ and the kind in launch.h's switches, -Wswitch);
#   - a new hook signature alone: the build fails, naming its missing handler.
#
#   scratch_kind.sh CC CUDA_INCLUDE SOURCE_DIR
set -u
cc=$1 cuda=$2 src=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/xmt-scratch.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0

compile() { # compile DIR FILE... : 0 when every file compiles
  local dir=$1 rc=0 inc=() sub
  shift
  for sub in "$dir"/*/; do inc+=(-I"${sub%/}"); done # the shim's folders (shim/CMakeLists.txt)
  for f in "$@"; do
    "$cc" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fsyntax-only "${inc[@]}" \
      -I"$src/policy" -I"$src/common" -I"$cuda" "$dir/$f" >>"$dir/errors.txt" 2>&1 || rc=1
  done
  return $rc
}

fresh() { # fresh NAME: a scratch copy of shim/
  rm -rf "$work/$1"
  cp -r "$src/shim" "$work/$1"
  echo "$work/$1"
}

users=(edge/hook.c session/launch.c edge/dispatch.c decide/discover.c decide/tuner.c edge/graph.c)

d=$(fresh same)
echo 'XMT_ENTRY(cuLaunchKernelScratch, LAUNCH, 0, 1)' >>"$d/edge/entries.h"
if compile "$d" "${users[@]}"; then
  echo "ok: a new entry point of an existing signature is one row"
else
  echo "FAIL: a new entry point of an existing signature did not compile:"; cat "$d/errors.txt"; fail=1
fi

d=$(fresh pass)
sed -i 's/^#define XMT_PASS_SIGNATURES(X) \\$/#define XMT_PASS_SIGNATURES(X) X(SCRATCHP) \\/' "$d/base/signatures.h"
sed -i 's/^#define XMT_LAUNCH_SIGNATURES/#define XMT_SIG_SCRATCHP (CUmodule *, m), (const void *, image), (int, n)\n&/' "$d/base/signatures.h"
echo 'XMT_ENTRY(cuScratchLoad, SCRATCHP, 0, 1)' >>"$d/edge/entries.h"
grep -q 'X(SCRATCHP)' "$d/base/signatures.h" || { echo "FAIL: the scratch row was not added"; fail=1; }
if compile "$d" "${users[@]}"; then
  echo "ok: a new pass-through signature is one row"
else
  echo "FAIL: a new pass-through signature did not compile:"; cat "$d/errors.txt"; fail=1
fi

d=$(fresh launch)
sed -i 's/^#define XMT_LAUNCH_SIGNATURES(X) X(LAUNCH)/#define XMT_LAUNCH_SIGNATURES(X) X(SCRATCHL) X(LAUNCH)/' "$d/base/signatures.h"
sed -i 's/^#define XMT_LAUNCH_SIGNATURES/#define XMT_SIG_SCRATCHL (CUfunction, f), (unsigned, gx), (CUstream, s)\n&/' "$d/base/signatures.h"
echo 'XMT_ENTRY(cuLaunchScratch, SCRATCHL, 0, 1)' >>"$d/edge/entries.h"
grep -q 'X(SCRATCHL)' "$d/base/signatures.h" || { echo "FAIL: the scratch row was not added"; fail=1; }
if compile "$d" "${users[@]}"; then
  echo "FAIL: a launch signature without its launch.h parts compiled"; fail=1
elif grep -q "xmt_launch_of_SCRATCHL" "$d/errors.txt" && grep -q "XMT_K_SCRATCHL" "$d/errors.txt"; then
  echo "ok: a new launch signature alone fails, naming xmt_launch_of_SCRATCHL and XMT_K_SCRATCHL"
else
  echo "FAIL: the errors do not name what is missing:"; cat "$d/errors.txt"; fail=1
fi

d=$(fresh hook)
sed -i 's/^#define XMT_HOOK_SIGNATURES(X) \\$/#define XMT_HOOK_SIGNATURES(X) X(SCRATCHH) \\/' "$d/base/signatures.h"
sed -i 's/^#define XMT_LAUNCH_SIGNATURES/#define XMT_SIG_SCRATCHH (CUgraph, g)\n&/' "$d/base/signatures.h"
echo 'XMT_ENTRY(cuScratchHook, SCRATCHH, 0, 1)' >>"$d/edge/entries.h"
if compile "$d" edge/hook.c; then
  echo "FAIL: a hook signature without its handler compiled"; fail=1
elif grep -q "on_SCRATCHH" "$d/errors.txt"; then
  echo "ok: a new hook signature alone fails, naming on_SCRATCHH (its handler)"
else
  echo "FAIL: the errors do not name the handler:"; cat "$d/errors.txt"; fail=1
fi
exit $fail
