#!/usr/bin/env bash
# torch_alloc.sh -- protect: auto under PyTorch's three allocators (torch_alloc.py): each
# without the shim, then tuned with a policy that declares no buffer; the outputs'
# hashes must agree and the tune event must show the key tuned (not "untuned").
#
#   bash tests/gpu/torch_alloc.sh LIBXMATUNE
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
shim=$1
PY=${PYTHON:-python3}
work=$(mktemp -d)
rc=0
echo "| allocator | outputs identical | regions | bytes reached | output bytes | in place | verify on | tuning ms | untuned |"
echo "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | --- |"
for conf in "" "expandable_segments:True" "backend:cudaMallocAsync"; do
    name=${conf:-default}
    PYTORCH_CUDA_ALLOC_CONF=$conf "$PY" "$here/torch_alloc.py" >"$work/base" 2>&1
    brc=$?
    if [ $brc = 77 ]; then echo "| $name | skipped: $(head -1 "$work/base") |"; continue; fi
    PYTORCH_CUDA_ALLOC_CONF=$conf XMATUNE_CACHE=off LD_PRELOAD=$shim XMATUNE_POLICY=$here/torch_alloc.yaml \
        XMATUNE_LOG=$work/$name.jsonl "$PY" "$here/torch_alloc.py" >"$work/tuned" 2>"$work/tuned.err"
    trc=$?
    same=no
    if [ $brc = 0 ] && [ $trc = 0 ] && [ "$(grep HASH "$work/base")" = "$(grep HASH "$work/tuned")" ]; then same=yes; fi
    [ $same = yes ] || { rc=1; cat "$work/tuned.err" | head -5; }
    "$PY" - "$work/$name.jsonl" "$name" "$same" <<'PYEOF' || rc=1
import json, sys
ev = [e for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "tune"]
if not ev:
    print("| %s | %s | no tune event |" % (sys.argv[2], sys.argv[3])); sys.exit(1)
e = ev[0]; p = e.get("protect", {})
print("| %s | %s | %s | %s | %s | %s | %s | %.1f | %s |" % (sys.argv[2], sys.argv[3], p.get("regions"),
      p.get("region_bytes"), p.get("output_bytes"), p.get("in_place_bytes"), p.get("verify_on"),
      e["duration_ms"], e.get("untuned", "")))
sys.exit(1 if e.get("untuned") else 0)
PYEOF
done
rm -rf "$work"
exit $rc
