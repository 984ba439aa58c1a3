#!/usr/bin/env bash
# cost_round.sh -- issue 26's checks in one call of at most ~10 minutes (a lent machine's
# per-call limit), each part given what time is left:
#   1. gpucheck_edges    the verification kernels against the host rules (every later
#                        verification rests on them)
#   2. idle / warm       fixed_block (every candidate rejected: no floor, its bound is
#                        20 ms alone) in IDLE_ROUNDS fresh processes each started after the
#                        GPU sat idle IDLE_S seconds, then as many back to back, the SM
#                        clock sampled every 20 ms: does a key with nothing to time stay
#                        within its bound on an idle GPU, and where does a slow round's
#                        time go (racing_table.py's clock and driver-call tables)
#   3. racing.sh         tuning cost against the full floor over the suite's keys, and
#                        choice quality (item 1's targets)
#   4. agreement.sh      10 fresh processes per key pick one winner (item 3's target)
#
#   bash tests/gpu/cost_round.sh BUILD_DIR LIBXMATUNE
#
# BUILD_DIR is tests/gpu/build.sh's output. Environment: END_S (default 570, the seconds
# the whole may take), IDLE_S (default 1.5), IDLE_ROUNDS (default 6), OUT (if set: each
# part's output under $OUT/<part>/ with its work folder's logs, packed into
# $OUT/cost_round.tgz: a lent machine returns few files). Prints each part's verdict lines
# as it goes.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
b=${1:?usage: cost_round.sh BUILD_DIR LIBXMATUNE}
shim=$(cd "$(dirname "${2:?usage: cost_round.sh BUILD_DIR LIBXMATUNE}")" && pwd)/$(basename "$2")
out=${OUT:-$(mktemp -d)}
T0=$(date +%s)
el() { echo "[$(($(date +%s) - T0)) s]"; }
left() { echo $((${END_S:-570} - ($(date +%s) - T0))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null || true
mkdir -p "$out/idle" "$out/warm" "$out/racing" "$out/agreement"
if [ -x "$b/bin/gpucheck_edges" ]; then
    "$b/bin/gpucheck_edges" >"$out/gpucheck_edges.txt" 2>&1
    echo "gpucheck_edges rc=$? $(el)"
    tail -2 "$out/gpucheck_edges.txt"
fi

# racing.sh, one part: NAME TIMEOUT VAR=VALUE... (its tables on stdout.txt; with OUT it
# saves racing.md and racing-logs.tar.gz itself; when the timeout cut it short, the logs are
# packed here instead, without the outputs' binaries)
racing() {
    local name=$1 limit=$2
    shift 2
    env "$@" OUT="$out/$name" XMATUNE_GPU_WORK="$out/$name/work" timeout "$limit" \
        bash "$here/racing.sh" "$b" "$shim" >"$out/$name/stdout.txt" 2>"$out/$name/stderr.txt"
    echo "racing.sh ($name) rc=$? $(el)"
    grep -E "^\| [a-z]|Over |quality|Lowest" "$out/$name/stdout.txt" | cut -c1-300 | head -40
    [ -f "$out/$name/racing-logs.tar.gz" ] ||
        tar czf "$out/$name/work.tgz" --exclude='*.bin' -C "$out/$name" work 2>/dev/null
    rm -rf "$out/$name/work"
}
n=${IDLE_ROUNDS:-6}
racing idle 90 PROGRAMS=fixed_block ROUNDS="$n" IDLE_S="${IDLE_S:-1.5}" CLOCK_MS=20 QUALITY=0
racing warm 60 PROGRAMS=fixed_block ROUNDS="$n" IDLE_S=0 CLOCK_MS=20 QUALITY=0
r=$(($(left) - 200))
[ $r -gt 180 ] && r=180
if [ $r -gt 90 ]; then
    racing racing "$r" RACING_BUDGET_S=$((r - 110)) QUALITY_BUDGET_S=55
fi
a=$(($(left) - 15))
[ $a -gt 240 ] && a=240
if [ $a -gt 60 ]; then
    XMATUNE_GPU_WORK=$out/agreement/work AGREEMENT_BUDGET_S=$((a - 70)) timeout "$a" \
        bash "$here/agreement.sh" "$b" "$shim" >"$out/agreement/stdout.txt" 2>"$out/agreement/stderr.txt"
    echo "agreement.sh rc=$? $(el)"
    grep -E "^\| [a-z]|Lowest" "$out/agreement/stdout.txt" | cut -c1-200 | head -14
    tar czf "$out/agreement/work.tgz" --exclude='*.bin' --exclude='*xdg*' -C "$out/agreement" work \
        2>/dev/null && rm -rf "$out/agreement/work"
fi
if [ -n "${OUT:-}" ]; then
    (cd "$out" && tar czf cost_round.tgz --exclude=cost_round.tgz ./* 2>/dev/null &&
        find . -mindepth 1 -maxdepth 1 ! -name cost_round.tgz -exec rm -rf {} +)
fi
echo "cost_round.sh: done $(el)"
