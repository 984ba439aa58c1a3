#!/usr/bin/env bash
# Self-test of scripts/layering.sh: a clean tree passes; a tree with each kind of violation
# fails with a message naming it. Run by ctest (layering_selftest).
set -uo pipefail
script=$(cd "$(dirname "$0")/../../scripts" && pwd)/layering.sh
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
check() { # NAME EXPECTED_RC PATTERN...
  local name=$1 want=$2 out rc p
  shift 2
  out=$(cd "$t/$name" && git init -q . && git add -A && LAYERING_ROOT="$t/$name" bash "$script" "$t/none" 2>&1)
  rc=$?
  if [ "$rc" != "$want" ]; then
    echo "FAIL $name: rc $rc, expected $want"$'\n'"$out"
    fails=$((fails + 1))
    return
  fi
  for p in "$@"; do
    if ! grep -q -- "$p" <<<"$out"; then
      echo "FAIL $name: no line matching '$p' in:"$'\n'"$out"
      fails=$((fails + 1))
    fi
  done
  echo "ok   $name"
}
mk() { mkdir -p "$(dirname "$t/$1")" && printf '%s\n' "$2" >"$t/$1"; }

# the shim's folder order, written where the build keeps it (shim/CMakeLists.txt)
order() { mk "$1/shim/CMakeLists.txt" 'set(XMATUNE_SHIM_DIRS edge base)'; }

# clean: shim modules in a chain across the folders, downwards only; tools on policy only;
# an X-macro list that is no module; the helper on the shim's lower folder
order clean
mk clean/shim/edge/top.c '#include "top.h"
#include "a.h"'
mk clean/shim/edge/top.h ''
mk clean/shim/base/a.c '#include "a.h"
#include "b.h"
#include "list.h"'
mk clean/shim/base/a.h '#include "b.h"'
mk clean/shim/base/b.c '#include "b.h"'
mk clean/shim/base/b.h ''
mk clean/shim/base/list.h '#include "a.h"'
mk clean/policy/p.c '#include "xmt_policy.h"'
mk clean/policy/xmt_policy.h ''
mk clean/tools/t.c '#include "xmt_policy.h"'
mk clean/tools/CMakeLists.txt 'add_executable(t t.c) # not shim/ (a comment mentioning shim/ is fine)'
mk clean/trial/h.c '#include "a.h"'
check clean 0 'layering: clean'

# a cycle through headers, three modules long, across two of the shim's folders
order cycle
mk cycle/shim/base/a.c '#include "a.h"'
mk cycle/shim/base/a.h '#include "b.h"'
mk cycle/shim/base/b.c '#include "c.h"'
mk cycle/shim/base/b.h ''
mk cycle/shim/base/c.c '#include "a.h"'
mk cycle/shim/base/c.h ''
check cycle 1 'shim/: modules use each other in a cycle' 'a -> .*b\|b -> .*a'

# a tool including a shim header, and compiling a shim source
order tool
mk tool/shim/base/options.c ''
mk tool/shim/base/options.h ''
mk tool/tools/t.c '#include "options.h"'
mk tool/tools/CMakeLists.txt 'add_executable(t t.c ${PROJECT_SOURCE_DIR}/shim/base/options.c)'
check tool 1 'tools/t.c includes "options.h", which is shim/ code' 'tools/CMakeLists.txt:1: the command'"'"'s build uses shim/'

# the policy library including a shim header
order policy
mk policy/shim/base/launch.h ''
mk policy/shim/base/launch.c ''
mk policy/policy/load.c '#include "launch.h"'
check policy 1 'policy/load.c includes "launch.h", which is shim/ code'

# rule 6: a lower folder of the shim including a higher one's header (no cycle: only the
# order is broken)
order updown
mk updown/shim/edge/high.c '#include "high.h"'
mk updown/shim/edge/high.h ''
mk updown/shim/base/low.c '#include "low.h"
#include "high.h"'
mk updown/shim/base/low.h ''
check updown 1 'shim/base/low.c includes "high.h", which is shim/edge/ code (shim/base/ is below shim/edge/: edge > base)'

# rule 6: a file loose in shim/, one in a folder the order does not name, two headers of
# one name
order loose
mk loose/shim/stray.c ''
mk loose/shim/misc/odd.c ''
mk loose/shim/edge/same.h ''
mk loose/shim/base/same.h ''
check loose 1 'shim/stray.c lies loose in shim/' 'shim/misc/odd.c is in shim/misc/, a folder the order does not name' 'two shim headers named same.h'

# rule 6: no order written
mk noorder/shim/base/a.c ''
check noorder 1 'the shim.s folder order is written nowhere'

# rule 5: the helper including a header of the shim's edge
order helper
mk helper/shim/edge/dispatch.h ''
mk helper/shim/edge/graph.h ''
mk helper/shim/edge/graph.c '#include "graph.h"'
mk helper/trial/h.c '#include "graph.h"'
check helper 1 'trial/h.c includes "graph.h", which is shim/edge/ code'

# a cycle only the objects show: b.c calls a function that b.h declares but a.c defines
mk sym/policy/a.c '#include "b.h"
int b_get(void);
int a_get(void) { return b_get(); }'
mk sym/policy/a.h ''
mk sym/policy/b.h 'int a_get(void);'
mk sym/policy/b.c '#include "b.h"
int b_get(void) { return a_get(); }'
mkdir -p "$t/sym/build/policy/CMakeFiles/p.dir"
for m in a b; do cc -c -o "$t/sym/build/policy/CMakeFiles/p.dir/$m.c.o" "$t/sym/policy/$m.c"; done
out=$(cd "$t/sym" && git init -q . && git add -A policy && LAYERING_ROOT="$t/sym" bash "$script" build 2>&1)
if [ $? = 1 ] && grep -q 'policy/: modules use each other in a cycle' <<<"$out"; then
  echo "ok   sym"
else
  echo "FAIL sym: $out"
  fails=$((fails + 1))
fi

# rule 6 by symbols: base/low.c calls a function that edge/high.c defines, declared in
# low.c itself (no include shows it)
order symorder
mk symorder/shim/edge/high.c 'int high_get(void) { return 1; }'
mk symorder/shim/base/low.c 'int high_get(void);
int low_get(void) { return high_get(); }'
for m in edge/high base/low; do
  mkdir -p "$t/symorder/build/shim/CMakeFiles/core.dir/$(dirname "$m")"
  cc -c -o "$t/symorder/build/shim/CMakeFiles/core.dir/$m.c.o" "$t/symorder/shim/$m.c"
done
out=$(cd "$t/symorder" && git init -q . && git add -A shim && LAYERING_ROOT="$t/symorder" bash "$script" build 2>&1)
if [ $? = 1 ] && grep -q "shim/base/low.c's object needs a symbol that shim/edge/high.c defines" <<<"$out"; then
  echo "ok   symorder"
else
  echo "FAIL symorder: $out"
  fails=$((fails + 1))
fi

exit $((fails > 0))
