#!/usr/bin/env bash
# Builds the trial request decoder's fuzz target (tests/unit/fuzz_trialreq.c) with clang
# (libFuzzer, ASan, UBSan) and runs it for a bounded time, seeded with the committed corpus
# (tests/unit/data/trialreq). The CTest trialreq_fuzz_corpus runs the same target without
# libFuzzer over that corpus and seeded mutations of it.
# usage: tests/unit/fuzz_trialreq.sh [SECONDS=20]
# Exit status: 0 no crash, leak, UB or round-trip mismatch found; non-zero otherwise (the
# reproducer is left in the work directory, printed at the end).
set -euo pipefail
. "$(dirname "$0")/../fuzz_lib.sh"
fuzz_setup trialreq
fuzz_build fuzz_trialreq -I"$root/common" "$root/tests/unit/fuzz_trialreq.c" \
  "$root/common/trialreq.c" "$root/common/trialreq_load.c" \
  /usr/lib/x86_64-linux-gnu/libjansson.a -lm
cp "$root"/tests/unit/data/trialreq/* "$work/corpus/"
fuzz_run fuzz_trialreq "${1:-20}" 16384 8
