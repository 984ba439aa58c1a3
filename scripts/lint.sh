#!/usr/bin/env bash
# Lint of xmatune's own C (shim/, policy/, tools/, tests/ except the GPU suite): clang-format
# (.clang-format), cppcheck (warning, performance, portability) and clang-tidy (.clang-tidy,
# through build-lint/compile_commands.json). Exits non-zero on any finding that
# scripts/lint.supp does not list. About a minute on 2 cores, nearly all clang-tidy.
# clang-tidy covers shim/, policy/, common/, tools/ and trial/ (the code that ships), including
# readability-function-size: no function over 100 lines but those lint.supp names.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
supp=scripts/lint.supp
fail=0

mapfile -t all < <(git ls-files '*.c' '*.h' | grep -v '^tests/gpu/')
fmt=("${all[@]}")
mapfile -t tidy < <(git ls-files 'shim/*.c' 'policy/*.c' 'common/*.c' 'tools/*.c' 'trial/*.c')

echo "lint: clang-format (${#fmt[@]} files)"
clang-format --dry-run -Werror "${fmt[@]}" || fail=1

cmake -S . -B build-lint -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cuda_inc=$(sed -n 's/^XMATUNE_CUDA_INCLUDE:PATH=//p' build-lint/CMakeCache.txt)
# the shim's headers are in its folders (XMATUNE_SHIM_DIRS, shim/CMakeLists.txt)
shim_inc=()
for d in shim/*/; do shim_inc+=(-I"${d%/}"); done

echo "lint: cppcheck"
grep -v '^tidy:' "$supp" | grep -v '^#' | grep . >build-lint/cppcheck.supp || true
cppcheck -q -j"$jobs" --error-exitcode=1 --enable=warning,performance,portability --inline-suppr \
  --std=c11 -D_GNU_SOURCE -D__GNUC__ -D__x86_64__ --suppress=missingIncludeSystem \
  --suppressions-list=build-lint/cppcheck.supp \
  "${shim_inc[@]}" -Ipolicy -Icommon -Itools -Itests/simdriver -I"$cuda_inc" \
  shim policy $(ls -d common trial 2>/dev/null) tools tests/simdriver tests/integration tests/unit tests/policy || fail=1

echo "lint: clang-tidy (${#tidy[@]} files)"
# clang-tidy exits non-zero on any finding; what counts is what lint.supp does not list.
printf '%s\n' "${tidy[@]}" |
  xargs -P"$jobs" -n4 clang-tidy -p build-lint --quiet --extra-arg=-Wno-unknown-warning-option \
  >build-lint/clang-tidy.log 2>&1 || true
python3 - "$supp" build-lint/clang-tidy.log "$PWD/" <<'PY' || fail=1
import re, sys
supp, log, root = sys.argv[1:]
# tidy:FILE:CHECK allows every finding of CHECK in FILE; tidy:FILE:CHECK:NAME only those
# about the function NAME (readability-function-size's exceptions).
allowed = {tuple(l.strip().split(":", 3)[1:]) for l in open(supp) if l.startswith("tidy:")}
bad = 0
for line in open(log):
    m = re.match(r"(\S+?):(\d+):\d+: (?:warning|error): (.*)\[([\w.,-]+)\]$", line.strip())
    if not m:
        continue
    path = m.group(1).replace(root, "")
    fn = re.match(r"function '([^']+)'", m.group(3))
    checks = [c for c in m.group(4).split(",") if c and not c.startswith("-")]
    if all((path, c) in allowed or (fn and (path, c, fn.group(1)) in allowed) for c in checks):
        continue
    bad += 1
    print(line.rstrip())
if bad:
    print("lint: %d clang-tidy finding(s); details in build-lint/clang-tidy.log" % bad)
sys.exit(1 if bad else 0)
PY

if ((fail)); then
  echo "lint: FAILED" >&2
  exit 1
fi
echo "lint: clean"
