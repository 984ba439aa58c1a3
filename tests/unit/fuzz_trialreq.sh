#!/usr/bin/env bash
# Builds the trial request decoder's fuzz target (tests/unit/fuzz_trialreq.c) with clang
# (libFuzzer, ASan, UBSan) and runs it for a bounded time, seeded with the committed corpus
# (tests/unit/data/trialreq). The CTest trialreq_fuzz_corpus runs the same target without
# libFuzzer over that corpus and seeded mutations of it.
# usage: tests/unit/fuzz_trialreq.sh [SECONDS=20]
# Exit status: 0 no crash, leak, UB or round-trip mismatch found; non-zero otherwise (the
# reproducer is left in the work directory, printed at the end).
set -euo pipefail
secs=${1:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${FUZZ_WORK:-$(mktemp -d /tmp/xmt-fuzz-trialreq.XXXXXX)}
mkdir -p "$work/corpus" "$work/artifacts"
CC=${CC_FUZZ:-clang-14}
command -v "$CC" >/dev/null || CC=clang
"$CC" -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined -I"$root/common" -o "$work/fuzz_trialreq" \
  "$root/tests/unit/fuzz_trialreq.c" "$root/common/trialreq.c" "$root/common/trialreq_load.c" \
  /usr/lib/x86_64-linux-gnu/libjansson.a -lm
cp "$root"/tests/unit/data/trialreq/* "$work/corpus/"
set +e
"$work/fuzz_trialreq" "$work/corpus" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
  -max_len=16384 -artifact_prefix="$work/artifacts/" -print_final_stats=1 >"$work/log" 2>&1
rc=$?
set -e
tail -n 8 "$work/log"
if [ "$rc" -ne 0 ] || ls "$work"/artifacts/* >/dev/null 2>&1; then
  echo "fuzz_trialreq: FAILED (rc $rc); artifacts in $work/artifacts" >&2
  exit 1
fi
echo "fuzz_trialreq: clean for ${secs}s (work dir $work)"
