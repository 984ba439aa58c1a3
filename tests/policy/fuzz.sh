#!/usr/bin/env bash
# Builds the policy fuzz target with clang-14 (libFuzzer, ASan, UBSan) and runs it for a
# bounded time over a seed corpus (the examples, the malformed corpus, a few expressions).
# usage: tests/policy/fuzz.sh [SECONDS=30] [JOBS=1]
# Exit status: 0 no crash, leak or UB found; non-zero otherwise (the reproducer is left
# in the work directory, printed at the end).
set -euo pipefail
secs=${1:-30}
jobs=${2:-1}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${FUZZ_WORK:-$(mktemp -d /tmp/xmt-fuzz.XXXXXX)}
mkdir -p "$work"
CC=${CC_FUZZ:-clang-14}
command -v "$CC" >/dev/null || CC=clang
flags=(-std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -I"$root/policy")
"$CC" "${flags[@]}" -o "$work/fuzz_policy" \
  "$root/tests/policy/fuzz_policy.c" "$root"/policy/*.c \
  /usr/lib/x86_64-linux-gnu/libyaml.a /usr/lib/x86_64-linux-gnu/libiberty.a -lm -lpthread
mkdir -p "$work/corpus" "$work/artifacts"
cp "$root"/tests/policy/corpus/*.yaml "$work/corpus/" 2>/dev/null || true
cp "$root"/examples/policies/*.yaml "$work/corpus/" 2>/dev/null || true
printf '=cdiv(grid0.x * block0.x, 256) + next_pow2(sm_count) %% 7' > "$work/corpus/expr1"
printf '=1 ? log2(l2_bytes) : max(1, 2.5, -3) / 0' > "$work/corpus/expr2"
# kernel names for the signature reader: the first column of its table
# (awk reads the whole file: a head that stops reading would SIGPIPE the pipe, which
# pipefail and set -e turned into an exit 141 when the machine was busy)
awk -F'\t' '!/^#/ && $1 != "" && n++ < 40 {print $1}' "$root/tests/policy/signatures.tsv" |
  { i=0; while IFS= read -r n; do i=$((i + 1)); printf '~%s' "$n" >"$work/corpus/sig$i"; done; }
# max_total_time bounds the run; -timeout catches a hang in one input.
set +e
"$work/fuzz_policy" "$work/corpus" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
  -max_len=8192 -jobs="$jobs" -workers="$jobs" -artifact_prefix="$work/artifacts/" \
  -print_final_stats=1 >"$work/log" 2>&1
rc=$?
set -e
tail -n 15 "$work/log"
if [ "$rc" -ne 0 ] || ls "$work"/artifacts/* >/dev/null 2>&1; then
  echo "fuzz_policy: FAILED (rc $rc); artifacts in $work/artifacts" >&2
  exit 1
fi
echo "fuzz_policy: clean for ${secs}s (work dir $work)"
