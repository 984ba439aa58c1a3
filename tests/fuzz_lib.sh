# Sourced by the fuzz scripts (tests/policy/fuzz.sh, tests/unit/fuzz_cache.sh,
# tests/unit/fuzz_trialreq.sh): what they share, built and run one way. Each script sets
# its corpus up in $work/corpus between fuzz_build and fuzz_run.
#   fuzz_setup NAME       $work (FUZZ_WORK, or a new /tmp/xmt-fuzz-NAME.XXXXXX), $CC, $root
#   fuzz_build NAME ARGS  clang with libFuzzer, ASan and UBSan (UB fatal) -> $work/NAME
#   fuzz_run NAME SECS MAX_LEN TAIL [LIBFUZZER ARGS]: runs it for SECS over $work/corpus
#                         (-timeout catches a hang in one input), prints the log's last TAIL
#                         lines; exit status 1 on a crash, leak, UB or any artifact
fuzz_setup() {
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  work=${FUZZ_WORK:-$(mktemp -d "/tmp/xmt-fuzz-$1.XXXXXX")}
  mkdir -p "$work/corpus" "$work/artifacts"
  CC=${CC_FUZZ:-clang-14}
  command -v "$CC" >/dev/null || CC=clang
}

fuzz_build() {
  local name=$1
  shift
  "$CC" -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -o "$work/$name" "$@"
}

fuzz_run() {
  local name=$1 secs=$2 max_len=$3 tail_n=$4 rc
  shift 4
  set +e
  "$work/$name" "$work/corpus" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len="$max_len" -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$@" \
    >"$work/log" 2>&1
  rc=$?
  set -e
  tail -n "$tail_n" "$work/log"
  if [ "$rc" -ne 0 ] || ls "$work"/artifacts/* >/dev/null 2>&1; then
    echo "$name: FAILED (rc $rc); artifacts in $work/artifacts" >&2
    return 1
  fi
  echo "$name: clean for ${secs}s (work dir $work)"
}
