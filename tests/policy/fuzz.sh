#!/usr/bin/env bash
# Builds the policy fuzz target with clang-14 (libFuzzer, ASan, UBSan) and runs it for a
# bounded time over a seed corpus (the examples, the malformed corpus, a few expressions).
# usage: tests/policy/fuzz.sh [SECONDS=30] [JOBS=1]
# Exit status: 0 no crash, leak or UB found; non-zero otherwise (the reproducer is left
# in the work directory, printed at the end).
set -euo pipefail
secs=${1:-30}
jobs=${2:-1}
. "$(dirname "$0")/../fuzz_lib.sh"
fuzz_setup policy
fuzz_build fuzz_policy -I"$root/policy" "$root/tests/policy/fuzz_policy.c" "$root"/policy/*.c \
  /usr/lib/x86_64-linux-gnu/libyaml.a /usr/lib/x86_64-linux-gnu/libiberty.a -lm -lpthread
cp "$root"/tests/policy/corpus/*.yaml "$work/corpus/" 2>/dev/null || true
cp "$root"/examples/policies/*.yaml "$work/corpus/" 2>/dev/null || true
printf '=cdiv(grid0.x * block0.x, 256) + next_pow2(sm_count) %% 7' > "$work/corpus/expr1"
printf '=1 ? log2(l2_bytes) : max(1, 2.5, -3) / 0' > "$work/corpus/expr2"
# kernel names for the signature reader: the first column of its table
# (awk reads the whole file: a head that stops reading would SIGPIPE the pipe, which
# pipefail and set -e turned into an exit 141 when the machine was busy)
awk -F'\t' '!/^#/ && $1 != "" && n++ < 40 {print $1}' "$root/tests/policy/signatures.tsv" |
  { i=0; while IFS= read -r n; do i=$((i + 1)); printf '~%s' "$n" >"$work/corpus/sig$i"; done; }
fuzz_run fuzz_policy "$secs" 8192 15 -jobs="$jobs" -workers="$jobs"
