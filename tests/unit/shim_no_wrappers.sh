#!/bin/sh
# shim_links_no_driver_wrappers: the trial helper's timing wrappers of driver calls
# (trial/drvwrap.c: xmt_drvtime_install and its timed_* functions) run in the helper only
# and must not be linked into the shim, whose own driver calls are never wrapped
# (shim/session/drvtime.h). The sums they add to (xmt_drvtime_read) are shared code and do
# show. Reads the full symbol table (nm -a), as shim_no_loader.sh does.
# Usage: shim_no_wrappers.sh path/to/libxmatune.so (the helper's executable, to see it fail).
set -u
so=$1
syms=$(nm -a "$so") || { echo "nm failed on $so"; exit 1; }
# The shared half must show, or the table was stripped and the check proves nothing.
if ! printf '%s\n' "$syms" | grep -qE ' xmt_drvtime_read$'; then
    echo "$so: no xmt_drvtime_read in its symbol table (stripped?): cannot check"
    exit 1
fi
wrappers=$(printf '%s\n' "$syms" | grep -E ' (xmt_drvtime_install|timed_cu[A-Za-z_0-9]*)$')
if [ -n "$wrappers" ]; then
    echo "$so links the trial helper's driver-call wrappers (keep them in trial/):"
    printf '%s\n' "$wrappers"
    exit 1
fi
echo "$so: no driver-call wrappers linked"
