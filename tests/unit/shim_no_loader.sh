#!/bin/sh
# shim_links_no_json_loader: jansson's loader (load.o: json_loads and its lexer) must never
# be linked into the shim: Debian's libjansson.a load.o is not position-independent
# (docs/architecture.md), and the shim only writes JSON (common/logevent.c). The log's
# reader lives in libxmtcommon_tools.a, which the shim does not link. Symbols linked in
# from the static archives are local (--exclude-libs), so this reads the full symbol table
# (nm -a), where load.o's functions would show, exported or not.
# Usage: shim_no_loader.sh path/to/libxmatune.so (or any other linked file, to see it fail).
set -u
so=$1
syms=$(nm -a "$so") || { echo "nm failed on $so"; exit 1; }
# The writer must show, or the table was stripped and the check below proves nothing.
if ! printf '%s\n' "$syms" | grep -qE ' json_dumps$'; then
    echo "$so: no json_dumps in its symbol table (stripped?): cannot check"
    exit 1
fi
loader=$(printf '%s\n' "$syms" | grep -E ' (json_load[a-z_]*|json_loadb|lex_scan[.a-z0-9]*|parse_json|stream_get[.a-z0-9]*)$')
if [ -n "$loader" ]; then
    echo "$so links jansson's loader (keep JSON reading in libxmtcommon_tools.a, out of the shim):"
    printf '%s\n' "$loader"
    exit 1
fi
echo "$so: no JSON loader linked"
