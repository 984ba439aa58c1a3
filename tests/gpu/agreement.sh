#!/usr/bin/env bash
# agreement.sh -- do processes agree on the winners, and does a second run against one
# cache benchmark nothing? (issue 10). Runs the GPU suite's tuning programs (those of
# run.sh: examples/gpu/<prog>.yaml) in tune mode:
#   1. 10 fresh processes one after another, each with its own fresh cache: per key, how
#      many picked the modal winner (target: at least 9 of 10), and how near each key's
#      decision came to going otherwise (the closest call to its tie limit);
#   2. 4 processes at once on one shared cache: one record per key, each key benchmarked
#      once in all (the others wait for the claim or use the record);
#   3. two runs one after the other against one cache: the second benchmarks nothing,
#      verifies each cached winner once, and its output is identical to the first's.
# Prints Markdown tables (for docs/benchmarks.md) on stdout; progress on stderr.
#
#   bash tests/gpu/agreement.sh [BUILD_DIR] [LIBXMATUNE]
#       BUILD_DIR   what tests/gpu/build.sh built   (default: <repo>/build-gpu)
#       LIBXMATUNE  the shim                        (default: <repo>/build/shim/libxmatune.so)
# Environment: PROGRAMS (default: saxpy transpose atomic_rowsum inplace_axpb fixed_block
# dyn_smem inplace_gs8 tied_pair row_softmax; the last three are issue 26's near-tie
# plateau, a deliberately tied pair, and a tuning accepted within a tolerance),
# PROCESSES (part 1, default 10), CONCURRENT (part 2, default 4),
# POLICY_DIR (default examples/gpu), XMATUNE_GPU_TIMEOUT (per run, 60 s),
# AGREEMENT_BUDGET_S (no new part-1 process after this many seconds, default 170: about
# 15 s a round for the nine programs on an H200; the whole script takes about 4 minutes),
# XMATUNE_GPU_WORK (work folder; default a new one under /tmp), AGREEMENT_ENV ("VAR=VALUE
# ..." given to every tune-mode process: an A/B of an option; the caller's own XMATUNE_*
# variables are not passed on).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
build=$(abspath "${1:-$root/build-gpu}")
shim=$(abspath "${2:-$root/build/shim/libxmatune.so}")
programs=${PROGRAMS:-saxpy transpose atomic_rowsum inplace_axpb fixed_block dyn_smem inplace_gs8 tied_pair row_softmax}
nproc=${PROCESSES:-10}
nconc=${CONCURRENT:-4}
poldir=$(abspath "${POLICY_DIR:-$root/examples/gpu}")
T=${XMATUNE_GPU_TIMEOUT:-60}
budget=${AGREEMENT_BUDGET_S:-170}
work=${XMATUNE_GPU_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/xmatune-agree.XXXXXX")}
mkdir -p "$work"
work=$(cd "$work" && pwd)
unset LD_PRELOAD
for v in $(compgen -e | grep '^XMATUNE_' || true); do unset "$v"; done
[ -f "$shim" ] || { echo "agreement.sh: no shim at $shim" >&2; exit 2; }
start=$(date +%s)

# one RUN_DIR PROG CACHE [VAR=VALUE...]: one tune-mode process; its log, output, rc there
one() {
  local dir=$1 prog=$2 cache=$3
  shift 3
  mkdir -p "$dir"
  # shellcheck disable=SC2086  # AGREEMENT_ENV: its words are the variables
  (cd "$dir" && timeout -k 10 "$T" env LD_PRELOAD="$shim" XMATUNE_MODE=tune \
    XMATUNE_POLICY="$poldir/$prog.yaml" XMATUNE_LOG="$dir/$prog.jsonl" XMATUNE_CACHE="$cache" \
    XDG_CACHE_HOME="$dir/xdg" ${AGREEMENT_ENV:-} "$@" "$build/bin/$prog" "$dir/$prog.bin" \
    >"$dir/$prog.stdout" 2>"$dir/$prog.stderr" </dev/null)
  echo $? >"$dir/$prog.rc"
}

for p in $programs; do
  if [ ! -x "$build/bin/$p" ]; then echo "agreement.sh: $build/bin/$p is not built" >&2; exit 2; fi
  mkdir -p "$work/base"
  (cd "$work/base" && timeout -k 10 "$T" "$build/bin/$p" "$work/base/$p.bin" >/dev/null 2>&1 </dev/null)
done
echo "agreement.sh: part 1, $nproc fresh processes" >&2
done1=0
for ((i = 0; i < nproc; i++)); do
  if [ $(($(date +%s) - start)) -gt "$budget" ]; then
    echo "agreement.sh: budget spent after $i processes" >&2
    break
  fi
  for p in $programs; do
    d=$work/fresh/$i
    one "$d" "$p" "$d/cache.jsonl"
  done
  done1=$((i + 1))
  echo "agreement.sh:   process $done1 done ($(($(date +%s) - start)) s)" >&2
done
echo "agreement.sh: part 2, $nconc processes at once on one cache" >&2
for p in $programs; do
  for ((i = 0; i < nconc; i++)); do
    one "$work/shared/$p/$i" "$p" "$work/shared/$p/cache.jsonl" &
  done
  wait
done
echo "agreement.sh: part 3, two runs on one cache" >&2
for p in $programs; do
  one "$work/twice/1" "$p" "$work/twice/cache.jsonl"
  one "$work/twice/2" "$p" "$work/twice/cache.jsonl"
done
echo "agreement.sh: done in $(($(date +%s) - start)) s; work folder $work" >&2
# shellcheck disable=SC2086  # one argument per program
python3 "$here/agreement.py" "$work" "$done1" "$nconc" $programs
