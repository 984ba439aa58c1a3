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

# clean: shim modules in a chain, tools on policy only, an X-macro list that is no module
mk clean/shim/a.c '#include "a.h"
#include "b.h"
#include "list.h"'
mk clean/shim/a.h '#include "b.h"'
mk clean/shim/b.c '#include "b.h"'
mk clean/shim/b.h ''
mk clean/shim/list.h '#include "a.h"'
mk clean/policy/p.c '#include "xmt_policy.h"'
mk clean/policy/xmt_policy.h ''
mk clean/tools/t.c '#include "xmt_policy.h"'
mk clean/tools/CMakeLists.txt 'add_executable(t t.c) # not shim/ (a comment mentioning shim/ is fine)'
check clean 0 'layering: clean'

# a cycle through headers, three modules long
mk cycle/shim/a.c '#include "a.h"'
mk cycle/shim/a.h '#include "b.h"'
mk cycle/shim/b.c '#include "c.h"'
mk cycle/shim/b.h ''
mk cycle/shim/c.c '#include "a.h"'
mk cycle/shim/c.h ''
check cycle 1 'shim/: modules use each other in a cycle' 'a -> .*b\|b -> .*a'

# a tool including a shim header, and compiling a shim source
mk tool/shim/options.c ''
mk tool/shim/options.h ''
mk tool/tools/t.c '#include "options.h"'
mk tool/tools/CMakeLists.txt 'add_executable(t t.c ${PROJECT_SOURCE_DIR}/shim/options.c)'
check tool 1 'tools/t.c includes "options.h", which is shim/ code' 'tools/CMakeLists.txt:1: the command'"'"'s build uses shim/'

# the policy library including a shim header
mk policy/shim/launch.h ''
mk policy/shim/launch.c ''
mk policy/policy/load.c '#include "launch.h"'
check policy 1 'policy/load.c includes "launch.h", which is shim/ code'

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

exit $((fails > 0))
