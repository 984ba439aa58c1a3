#!/usr/bin/env bash
# ab_shims.sh -- two builds of the shim side by side on the GPU suite's tuning programs:
# PAIRS pairs of racing.sh runs (ROUNDS fresh tune processes per program each, QUALITY=0),
# A then B in each pair, so that both see the same machine over the same minutes; then
# ab_table.py prints, per program and build, the tune events' tuning time (duration_ms less
# the clock warm-up and the module load) and the time no driver call took (the helper's
# own work, from driver_calls), median and range over every event, with the host-to-device
# and device-to-host copies and the guard bytes per event.
#
#   bash tests/gpu/ab_shims.sh BUILD_DIR SHIM_A SHIM_B
#
# BUILD_DIR is tests/gpu/build.sh's output; each shim finds its own helper
# (../trial/xmatune-trial beside it). Environment: PROGRAMS (default "atomic_rowsum
# inplace_gs8", the suite's keys with guard bytes), PAIRS (2), ROUNDS (3), XMATUNE_GPU_WORK
# (work folder: A.<pair>/ and B.<pair>/ are racing.sh's; default a new one under /tmp),
# OUT (if set: ab.md is saved there). Each racing.sh run is given 300 s.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
b=$(abspath "${1:?usage: ab_shims.sh BUILD_DIR SHIM_A SHIM_B}")
a_shim=$(abspath "${2:?usage: ab_shims.sh BUILD_DIR SHIM_A SHIM_B}")
b_shim=$(abspath "${3:?usage: ab_shims.sh BUILD_DIR SHIM_A SHIM_B}")
work=${XMATUNE_GPU_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/xmatune-ab.XXXXXX")}
mkdir -p "$work"
work=$(cd "$work" && pwd)
for ((p = 1; p <= ${PAIRS:-2}; p++)); do
    for who in A B; do
        shim=$a_shim
        [ $who = B ] && shim=$b_shim
        rm -rf "$work/$who.$p"
        # (OUT is this script's: racing.sh would save each run's tables there over the last)
        env -u OUT PROGRAMS="${PROGRAMS:-atomic_rowsum inplace_gs8}" ROUNDS="${ROUNDS:-3}" \
            QUALITY=0 RACING_BUDGET_S=100000 XMATUNE_GPU_WORK="$work/$who.$p" timeout 300 \
            bash "$here/racing.sh" "$b" "$shim" >"$work/$who.$p.out" 2>&1
        echo "ab_shims.sh: $who pair $p rc=$?" >&2
    done
done
{
    echo "A: $a_shim"
    echo "B: $b_shim"
    echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
    echo
    "${PYTHON:-python3}" "$here/ab_table.py" "$work"
} | tee "$work/ab.md"
[ -n "${OUT:-}" ] && mkdir -p "$OUT" && cp "$work/ab.md" "$OUT/"
exit 0
