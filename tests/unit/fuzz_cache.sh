#!/usr/bin/env bash
# Builds the cache-reader fuzz target (tests/unit/fuzz_cacherec.c) with clang (libFuzzer,
# ASan, UBSan) and runs it for a bounded time over a seed corpus of record lines.
# usage: tests/unit/fuzz_cache.sh [SECONDS=20]
# Exit status: 0 no crash, leak, UB or round-trip mismatch found; non-zero otherwise (the
# reproducer is left in the work directory, printed at the end).
set -euo pipefail
. "$(dirname "$0")/../fuzz_lib.sh"
fuzz_setup cache
fuzz_build fuzz_cacherec -I"$root/common" "$root/tests/unit/fuzz_cacherec.c" \
  "$root/common/cacherec.c" /usr/lib/x86_64-linux-gnu/libjansson.a -lm
printf '%s\n' '{"v":2,"device":"NVIDIA H200|cc9.0|sm132|drv13000","kernel":"_Z5saxpyifPKfPf","code":"29e34cc3f3d5e881","entry":"match: saxpy","entry_fp":"a30e88fc0fe86d2f","key":"000000010000000000","key_text":"x.shape=(65536,)","index":3,"label":"BLOCK=256","time_ms":0.0047}' >"$work/corpus/v2"
printf '%s\n' '{"device":"d","kernel":"k","entry":"e","key":"00","index":2}' 'garbage' '{"v":2,"device":"q\"\\x","kernel":"k","code":"c","entry":"e","entry_fp":"f","key":"00","index":-1}' >"$work/corpus/mixed"
fuzz_run fuzz_cacherec "${1:-20}" 4096 8
