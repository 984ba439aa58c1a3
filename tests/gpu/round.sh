#!/usr/bin/env bash
# round.sh -- this round's H200 checks in one call of at most ~10 minutes (a lent machine's
# per-call limit), most urgent first, each part given what time is left:
#   1. gpucheck_edges   the verification kernels against the host rules (must pass first:
#                       every later verification rests on them)
#   2. launch_rate.sh   pass-through, hit, and auto's hit with fixed and moving pointers
#                       (issue 28, item 1: at least 0.98 of the driver's own rate)
#   3. racing.sh        tuning cost against the full floor, choice quality, and the
#                       six ways of timing its lowest key (issue 26, item 1)
#   4. auto.sh          no policy against the hand policies (issue 28, item 7)
#   5. run.sh           interposition and tuning, outputs identical, with what is left
#
#   bash tests/gpu/round.sh BUILD_DIR LIBXMATUNE
#
# BUILD_DIR is tests/gpu/build.sh's output. END_S (default 570): the seconds the whole may
# take. OUT (if set): each part's output under $OUT/<part>/, packed into $OUT/round.tgz
# (a lent machine returns few files). Prints each part's verdict lines as it goes.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
b=${1:?usage: round.sh BUILD_DIR LIBXMATUNE}
shim=$(cd "$(dirname "${2:?usage: round.sh BUILD_DIR LIBXMATUNE}")" && pwd)/$(basename "$2")
out=${OUT:-$(mktemp -d)}
T0=$(date +%s)
el() { echo "[$(($(date +%s) - T0)) s]"; }
left() { echo $((${END_S:-570} - ($(date +%s) - T0))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
mkdir -p "$out/racing" "$out/lr" "$out/auto" "$out/run"
"$b/bin/gpucheck_edges" >"$out/gpucheck_edges.txt" 2>&1
echo "gpucheck_edges rc=$? $(el)"
tail -3 "$out/gpucheck_edges.txt"
OUT=$out/lr ROUNDS=5 BUDGET_S=40 PAIRED_BLOCKS=40 timeout 70 bash "$here/launch_rate.sh" "$b" "$shim" \
    >"$out/lr/stdout.txt" 2>"$out/lr/stderr.txt"
echo "launch_rate.sh rc=$? $(el)"
grep -E "^\|" "$out/lr/stdout.txt" | tail -6
OUT=$out/racing RACING_BUDGET_S=75 QUALITY_BUDGET_S=55 XMATUNE_GPU_WORK=$out/racing/work timeout 180 \
    bash "$here/racing.sh" "$b" "$shim" >"$out/racing/stdout.txt" 2>"$out/racing/stderr.txt"
echo "racing.sh rc=$? $(el)"
grep -E "^\| [a-z]|Over |quality|Lowest|^n = " "$out/racing/stdout.txt" | cut -c1-330 | head -40
# the six-way timing table lives under work/, which is not packed: keep and print it
cp "$out/racing/work/quality/timing_ways.md" "$out/racing/" 2>/dev/null &&
    head -c 3000 "$out/racing/timing_ways.md"
a=$(($(left) - 150))
[ $a -gt 240 ] && a=240
if [ $a -gt 60 ]; then
    OUT=$out/auto AUTO_BUDGET_S=$((a - 40)) XMATUNE_GPU_WORK=$out/auto/work timeout $a \
        bash "$here/auto.sh" "$b" "$shim" >"$out/auto/stdout.txt" 2>"$out/auto/stderr.txt"
    echo "auto.sh rc=$? $(el)"
    grep -E "^\| [a-z]|Overall" "$out/auto/stdout.txt" | cut -c1-300 | head -30
fi
r=$(($(left) - 15))
if [ $r -gt 40 ]; then
    OUT=$out/run XMATUNE_GPU_BUDGET_S=$((r - 25)) XMATUNE_GPU_WORK=$out/run/work timeout $r \
        bash "$here/run.sh" "$b" "$shim" >"$out/run/stdout.txt" 2>"$out/run/stderr.txt"
    echo "run.sh rc=$? $(el)"
    grep -E "DIFF|FAIL|differ" "$out/run/stderr.txt" | head -5
    tail -3 "$out/run/stderr.txt"
fi
if [ -n "${OUT:-}" ]; then
    (cd "$out" && tar czf round.tgz --exclude=round.tgz --exclude=work ./* 2>/dev/null &&
        find . -mindepth 1 -maxdepth 1 ! -name round.tgz -exec rm -rf {} +)
fi
echo "end $(el)"
