# shellcheck shell=bash disable=SC2154  # PY, here, work, start: the caller's
# report.sh -- the last step of auto.sh and racing.sh, sourced by both: NAME_table.py
# (NAME: auto or racing) makes the Markdown table from the work folder; it goes to stdout,
# and with OUT set it is saved there as NAME.md beside a tar of the logs (NAME-logs.tar.gz).
# Reads the caller's PY, here, work and start; exits with the table's status (2 when the
# table script failed).
report_and_exit() {
    local name=$1 table="$work/$1.md" rc
    "$PY" "$here/${name}_table.py" "$work" >"$table" 2>"$work/${name}_table.stderr"
    rc=$?
    if [ ! -s "$table" ]; then
        echo "$name.sh: ${name}_table.py failed:" >&2
        cat "$work/${name}_table.stderr" >&2
        rc=2
    fi
    echo
    cat "$table"
    echo
    echo "$name.sh: $(($(date +%s) - start)) s; work folder: $work" >&2
    if [ -n "${OUT:-}" ]; then
        mkdir -p "$OUT"
        cp "$table" "$OUT/$name.md"
        (cd "$work" && tar czf "$OUT/$name-logs.tar.gz" --exclude='./out' --exclude='./tmp' .) ||
            echo "$name.sh: could not write $OUT/$name-logs.tar.gz" >&2
    fi
    exit $rc
}
