#!/usr/bin/env bash
# layering.sh -- checks the tree's layering rules; run by scripts/test.sh. Exits 1 on any
# violation, naming it. No build needed (it reads sources and CMake files only).
#
# The rules (docs/architecture.md, "Layers"):
#  1. No tool includes or compiles anything in shim/: tools/ builds on common/ and policy/
#     only (a benchmark may load the built libxmatune.so at run time; that is not a
#     dependency of its code).
#  2. The policy library includes nothing of shim/ or common/: it is a library of its own,
#     with one public header.
#  3. common/ includes nothing of shim/, policy's public header only.
#  4. Within each folder, modules do not use each other in a cycle. A module is x.c and
#     x.h (or x.S); see rule 4 below for what "uses" means.
#  5. The shim includes nothing of trial/ (they speak through common/trialproto.h); the
#     trial helper (trial/) may use the shim's tuning core but never its hooks (hook.h,
#     dispatch.h, shim.h): the helper must never intercept anything.
#
#   bash scripts/layering.sh [BUILD_DIR]   (default build/; without one, includes only)
#   LAYERING_ROOT=DIR checks another tree (the self-test, tests/layering/run.sh, does).
set -uo pipefail
cd "${LAYERING_ROOT:-$(dirname "$0")/..}" || exit 2
fail=0
say() {
  echo "layering: $*" >&2
  fail=1
}

# quoted includes of FILE, one per line (the name as written)
includes() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"; }

# -- 1 to 3: which folders a folder's code may reach through its quoted includes.
# check_reach DIR "ALLOWED DIRS" "FORBIDDEN DIRS"
check_reach() {
  local dir=$1 allowed=$2 forbidden=$3 f inc base d found
  while IFS= read -r f; do
    while IFS= read -r inc; do
      base=${inc##*/}
      # resolved the way the compiler would: the including file's own folder first
      [ -e "$(dirname "$f")/$inc" ] && continue
      found=
      for d in $allowed; do [ -e "$d/$inc" ] && found=1 && break; done
      [ -n "$found" ] && continue
      for d in $forbidden; do
        if [ -e "$d/$inc" ] || [ -e "$d/$base" ]; then
          say "$f includes \"$inc\", which is $d/ code ($dir/ must not use $d/)"
        fi
      done
    done < <(includes "$f")
  done < <(git ls-files "$dir/*.c" "$dir/*.h")
}
check_reach tools "tools common policy" "shim"
check_reach policy "policy" "shim common"
[ -d common ] && check_reach common "common policy" "shim"
if [ -d trial ]; then
  while IFS= read -r f; do
    while IFS= read -r inc; do
      case "${inc##*/}" in
      hook.h | dispatch.h | shim.h) say "$f includes \"$inc\": the helper must not use the shim's hooks" ;;
      esac
    done < <(includes "$f")
  done < <(git ls-files 'trial/*.c' 'trial/*.h')
fi
[ -d trial ] && check_reach shim "shim common policy" "trial"

# CMake: a tool target compiling sources or adding include folders from shim/.
while IFS= read -r f; do
  while IFS=: read -r line text; do
    say "$f:$line: the command's build uses shim/ sources or headers: $text"
  done < <(grep -n '' "$f" | sed 's/^\([0-9]*:[^#]*\)#.*/\1/' | grep 'shim/\|/shim\b')
done < <(git ls-files 'tools/CMakeLists.txt' 'tools/*/CMakeLists.txt' 'policy/CMakeLists.txt' 'common/CMakeLists.txt' 'trial/CMakeLists.txt')

# -- 4: module cycles within each product folder. Module x uses module y when x.c or x.h
# includes "y.h" of the same folder, or (given a build) when x's object file needs a
# symbol that y's defines -- which also catches a function declared in one module's header
# but defined in another's .c. tsort(1) finds the cycles.
build=${1:-build}
symbol_edges() { # DIR: "x y" for every undefined symbol of x.o that y.o defines
  local dir=$1 o
  [ -d "$build/$dir/CMakeFiles" ] || return 0
  for o in "$build/$dir"/CMakeFiles/*.dir/*.o; do
    [ -e "$o" ] || continue
    m=$(basename "$o")
    [ -e "$dir/${m%.o}" ] || continue # a stale object of a source that is gone
    m=${m%%.*}
    nm "$o" 2>/dev/null | awk -v m="$m" '$1 == "U" { print "U", m, $2 } NF == 3 && $2 ~ /^[TDBRVW]$/ { print "D", m, $3 }'
  done | awk '$1 == "D" { def[$3] = $2 } $1 == "U" { use[NR] = $2 " " $3 }
    END { for (i in use) { split(use[i], a, " "); if ((a[2] in def) && def[a[2]] != a[1]) print a[1], def[a[2]] } }'
}
for dir in shim policy common tools trial; do
  [ -d "$dir" ] || continue
  edges=$(
    {
      for f in $(git ls-files "$dir/*.c" "$dir/*.h" "$dir/*.S"); do
        [ "$(dirname "$f")" = "$dir" ] || continue
        name=$(basename "$f")
        mod=${name%.*}
        echo "$mod $mod" # every module is a node, even one with no edges
        while IFS= read -r inc; do
          case $inc in */*) continue ;; esac
          dep=${inc%.h}
          [ "$dep" = "$inc" ] && continue # not a header (an included table)
          [ "$dep" = "$mod" ] && continue
          [ -e "$dir/$inc" ] || continue
          # a header with no .c of its own (the public header, an X-macro list) is no module
          { [ -e "$dir/$dep.c" ] || [ -e "$dir/$dep.S" ]; } || continue
          echo "$mod $dep"
        done < <(includes "$f")
      done
      symbol_edges "$dir"
    } | sort -u
  )
  out=$(printf '%s\n' "$edges" | tsort 2>&1 >/dev/null)
  if [ -n "$out" ]; then
    # tsort prints each loop as "input contains a loop:" then one member per line
    loops=$(printf '%s\n' "$out" | sed 's/^tsort: //; s/^-: //' |
      awk '/input contains a loop/ { if (l != "") print l; l = ""; next } { l = (l == "" ? $1 : l " -> " $1) } END { if (l != "") print l }')
    say "$dir/: modules use each other in a cycle (each loop, in tsort's order):"
    printf '%s\n' "$loops" | sed 's/^/    /' >&2
  fi
done

if ((fail)); then
  echo "layering: FAILED (rules: scripts/layering.sh, docs/architecture.md)" >&2
  exit 1
fi
echo "layering: clean"
