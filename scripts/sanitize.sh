#!/usr/bin/env bash
# Sanitized runs of the tests that need no GPU (called by scripts/test.sh; how long they
# take: the README, under Quick start):
#  - build-asan: ASan + UBSan build of the shim, the policy library, the simulated driver,
#    the tools and every test program; the whole ctest suite runs in it, the runs "with
#    the shim" preloading libasan.so before libxmatune.so (cases.py's XMT_PRELOAD_PREFIX),
#    leaks detected (scripts/lsan.supp lists the ones by design), any UBSan report fatal.
#    integ_exported_symbols is left out: a sanitized shim needs libasan/libubsan at run
#    time, which that test rightly refuses; and integ_tune_fork_children_exit: gcc 12's
#    ASan runtime (older than LLVM's fork handlers for its allocator) appears to leave a
#    child forked while the tuning thread is in malloc deadlocked on the allocator's lock,
#    at its first allocation or in LeakSanitizer's exit check (1 child of 100 hung in about one run of three; never in
#    the release, -O0 or TSan runs, which keep the test). TSan runs it. The same holds
#    for integ_graph_fork_children_exit (its thread allocates as it walks graphs: 2 of
#    100 children hung, and one reported false leaks after LeakSanitizer could not stop
#    the thread it was forked beside).
#  - build-tsan: ThreadSanitizer build of what the integration cases run (the shim, the
#    trial helper, the simulated driver, the test programs, the command); the cases
#    labelled `threads` run (tests/integration/CMakeLists.txt says which and why: those
#    where two threads meet, integ_discover_*_threads, integ_tune_16_threads_exact,
#    integ_tune_fork_children_exit, the trial helper's watchdog, ...). The other cases are
#    single-threaded: TSan finds nothing there, and running them all took 10 minutes.
# XMATUNE_SANITIZE_ONLY=asan|tsan runs one of the two.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
only=${XMATUNE_SANITIZE_ONLY:-}
supp="$PWD/scripts/lsan.supp"

if [ "$only" != tsan ]; then
  asan=$(gcc -print-file-name=libasan.so)
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DXMATUNE_SANITIZE=ON >/dev/null
  cmake --build build-asan -j"$jobs" >/dev/null
  XMT_PRELOAD_PREFIX="$asan:" \
    ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:fast_unwind_on_malloc=0 \
    LSAN_OPTIONS="suppressions=$supp:print_suppressions=0" \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs" \
    -E '^integ_(exported_symbols|tune_fork_children_exit|graph_fork_children_exit)$'
fi

if [ "$only" != asan ]; then
  tsan=$(gcc -print-file-name=libtsan.so)
  cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DXMATUNE_SANITIZE_THREAD=ON >/dev/null
  cmake --build build-tsan -j"$jobs" --target xmatune xmatune-trial xmatune-cmd simcuda \
    app_rt app_linked noflock rtld_next >/dev/null
  XMT_PRELOAD_PREFIX="$tsan:" \
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --test-dir build-tsan --output-on-failure -j"$jobs" -L '^threads$'
fi
