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
#  4. Within each folder, modules do not use each other in a cycle (the shim's folders
#     count as one). A module is x.c and x.h (or x.S); see rule 4 below for what "uses" means.
#  5. The shim includes nothing of trial/ (they speak through common/trialproto.h); the
#     trial helper (trial/) may use the shim's tuning core but never its edge (shim/edge/:
#     hook.h, dispatch.h, shim.h, ...): the helper must never intercept anything.
#  6. The shim's code lives in its folders, and they are in an order: a folder's code uses
#     only its own folder and the folders after it in XMATUNE_SHIM_DIRS (shim/CMakeLists.txt,
#     the one place the order is written): by its quoted includes, and (given a build) by
#     the symbols its objects need. No file lies loose in shim/ or in a folder the order
#     does not name, and no two shim headers share a name (includes name them bare).
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

# The shim's folders in their order (rule 6), read from the one place they are written.
shim_dirs=
[ -f shim/CMakeLists.txt ] &&
  shim_dirs=$(sed -n 's/^[[:space:]]*set(XMATUNE_SHIM_DIRS[[:space:]]*\([^)]*\)).*/\1/p' shim/CMakeLists.txt)
# the include folders a top folder's code is compiled with: the shim's are its own folders
include_dirs() { # DIR...
  local d s
  for d in "$@"; do
    if [ "$d" = shim ] && [ -n "$shim_dirs" ]; then
      for s in $shim_dirs; do echo "shim/$s"; done
    else
      echo "$d"
    fi
  done
}

# -- 1 to 3: which folders a folder's code may reach through its quoted includes.
# check_reach DIR "ALLOWED DIRS" "FORBIDDEN DIRS"
check_reach() {
  local dir=$1 allowed=$2 forbidden=$3 f inc base d s found
  while IFS= read -r f; do
    while IFS= read -r inc; do
      base=${inc##*/}
      # resolved the way the compiler would: the including file's own folder first
      [ -e "$(dirname "$f")/$inc" ] && continue
      found=
      # shellcheck disable=SC2086 # a list of folders
      for d in $(include_dirs $allowed); do [ -e "$d/$inc" ] && found=1 && break; done
      [ -n "$found" ] && continue
      for d in $forbidden; do
        for s in $(include_dirs "$d"); do
          if [ -e "$s/$inc" ] || [ -e "$s/$base" ]; then
            say "$f includes \"$inc\", which is $d/ code ($dir/ must not use $d/)"
            break
          fi
        done
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
      if [ -e "shim/edge/${inc##*/}" ]; then
        say "$f includes \"$inc\", which is shim/edge/ code: the helper must not use the shim's hooks"
      fi
      case "${inc##*/}" in
      hook.h | dispatch.h | shim.h) [ -e "shim/edge/${inc##*/}" ] ||
        say "$f includes \"$inc\": the helper must not use the shim's hooks" ;;
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

# -- 4: module cycles within each product folder (the shim's folders together: one
# module space, names unique, rule 6). Module x uses module y when x.c or x.h includes
# "y.h" of the same folder, or (given a build) when x's object file needs a symbol that
# y's defines -- which also catches a function declared in one module's header but
# defined in another's .c. tsort(1) finds the cycles.
build=${1:-build}
symbol_uses() { # DIR: "x y" (source paths) for every undefined symbol of x's object that y's defines
  local dir=$1 o rel
  [ -d "$build/$dir/CMakeFiles" ] || return 0
  while IFS= read -r o; do
    rel=${o#"$build/$dir"/CMakeFiles/*.dir/} # the object's path mirrors its source's
    [ -e "$dir/${rel%.o}" ] || continue      # a stale object of a source that is gone
    nm "$o" 2>/dev/null | awk -v m="$dir/${rel%.o}" '$1 == "U" { print "U", m, $2 } NF == 3 && $2 ~ /^[TDBRVW]$/ { print "D", m, $3 }'
  done < <(find "$build/$dir/CMakeFiles" -path '*.dir/*' -name '*.o' | sort)
}
# the defining side of symbol_uses' lines
symbol_edges() {
  awk '$1 == "D" { def[$3] = $2 } $1 == "U" { use[NR] = $2 " " $3 }
    END { for (i in use) { split(use[i], a, " "); if ((a[2] in def) && def[a[2]] != a[1]) print a[1], def[a[2]] } }'
}
modname() { sed 's|[^ ]*/||g; s|\.[^ ]*||g'; } # "shim/x/a.c shim/y/b.c" -> "a b"
for dir in shim policy common tools trial; do
  [ -d "$dir" ] || continue
  srcdirs=$(include_dirs "$dir")
  sym=$(symbol_uses "$dir" | symbol_edges | sort -u)
  [ "$dir" = shim ] && shim_sym=$sym
  edges=$(
    {
      for sd in $srcdirs; do
        for f in $(git ls-files "$sd/*.c" "$sd/*.h" "$sd/*.S"); do
          [ "$(dirname "$f")" = "$sd" ] || continue
          name=$(basename "$f")
          mod=${name%.*}
          echo "$mod $mod" # every module is a node, even one with no edges
          while IFS= read -r inc; do
            case $inc in */*) continue ;; esac
            dep=${inc%.h}
            [ "$dep" = "$inc" ] && continue # not a header (an included table)
            [ "$dep" = "$mod" ] && continue
            for d in $srcdirs; do
              [ -e "$d/$inc" ] || continue
              # a header with no .c of its own (the public header, an X-macro list) is no module
              { [ -e "$d/$dep.c" ] || [ -e "$d/$dep.S" ]; } && echo "$mod $dep"
              break
            done
          done < <(includes "$f")
        done
      done
      [ -n "$sym" ] && printf '%s\n' "$sym" | modname
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

# -- 6: the shim's folders in their order. rank: a folder's place in XMATUNE_SHIM_DIRS (0:
# the top); code of rank r may use rank r or higher only.
if [ -d shim ]; then
  [ -n "$shim_dirs" ] || say "shim/CMakeLists.txt: no set(XMATUNE_SHIM_DIRS ...): the shim's folder order is written nowhere"
  declare -A rank=()
  r=0
  for d in $shim_dirs; do
    rank[$d]=$r
    r=$((r + 1))
  done
  order=${shim_dirs// / > }
  folder_of() { # shim/F/... -> F
    local p=${1#shim/}
    echo "${p%%/*}"
  }
  declare -A home=() # a header's bare name -> its folder
  while IFS= read -r f; do
    case $f in shim/*/*) ;; *)
      say "$f lies loose in shim/: the shim's code lives in its folders ($order)"
      continue
      ;;
    esac
    F=$(folder_of "$f")
    if [ -z "${rank[$F]+x}" ]; then
      say "$f is in shim/$F/, a folder the order does not name ($order; shim/CMakeLists.txt)"
      continue
    fi
    case $f in *.h)
      b=$(basename "$f")
      [ -n "${home[$b]+x}" ] && say "$f and shim/${home[$b]}/$b: two shim headers named $b (includes name them bare)"
      home[$b]=$F
      ;;
    esac
  done < <(git ls-files 'shim/*.c' 'shim/*.h' 'shim/*.S')
  while IFS= read -r f; do
    F=$(folder_of "$f")
    [ -n "${rank[$F]+x}" ] || continue
    while IFS= read -r inc; do
      G=${home[${inc##*/}]-}
      [ -n "$G" ] || continue # not the shim's (common/, policy/, a system header)
      if ((rank[$G] < rank[$F])); then
        say "$f includes \"$inc\", which is shim/$G/ code (shim/$F/ is below shim/$G/: $order)"
      fi
    done < <(includes "$f")
  done < <(git ls-files 'shim/*/*.c' 'shim/*/*.h' 'shim/*/*.S')
  while read -r x y; do
    [ -n "$x" ] || continue
    F=$(folder_of "$x") G=$(folder_of "$y")
    { [ -n "${rank[$F]+x}" ] && [ -n "${rank[$G]+x}" ]; } || continue
    if ((rank[$G] < rank[$F])); then
      say "$x's object needs a symbol that $y defines (shim/$F/ is below shim/$G/: $order)"
    fi
  done <<<"${shim_sym:-}"
fi

if ((fail)); then
  echo "layering: FAILED (rules: scripts/layering.sh, docs/architecture.md)" >&2
  exit 1
fi
echo "layering: clean"
