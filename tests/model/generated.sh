#!/usr/bin/env bash
# Generated fixtures: multi-method LLM-like programs sharing weights, 4-bit, fp16, deconvolution, .ptd.
XPACK=$1; GEN=$2
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

# LLM-like: prefill and decode share every FullyConnected weight by named key: stored once.
"$GEN" llm -o llm.pte > /dev/null
"$XPACK" pack llm.pte -o llm.xpc --json > pack.json
"$XPACK" run llm.pte --method decode --json > one_method.json
python3 - <<'PY'
import json
p = json.load(open("pack.json"))
assert p["packed_delegates"] == 2 and p["shared_reuses"] == p["entries"] > 0, p
# decode re-used every weight prefill packed: the cache holds one method's packed weights, nothing more
assert p["shared_bytes"] == p["stored_bytes"] == p["packed_bytes"], p
print(f"  llm: {p['entries']} entries shared by prefill and decode, {p['shared_bytes']} bytes not packed twice")
PY
# The cache is no bigger than one method's packed weights plus metadata: pack decode alone and compare.
"$XPACK" run llm.pte --json > n.json
cp n.json llm_nocache.json
"$XPACK" run llm.pte --cache llm.xpc --json > c.json
compare_runs n.json c.json
stored=$("$XPACK" dump --json llm.xpc | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["stored_bytes"])')
# Two programs sharing their layers (variant B changes only the head): shared weights stored once.
"$GEN" llm -o a.pte > /dev/null
"$GEN" llm --variant B -o b.pte > /dev/null
"$XPACK" pack a.pte b.pte -o ab.xpc --json > ab.json
"$XPACK" pack b.pte -o b.xpc --json > b.json
python3 - <<'PY'
import json
ab, b = json.load(open("ab.json")), json.load(open("b.json"))
a_entries = json.load(open("pack.json"))["entries"]
assert ab["entries"] < a_entries + b["entries"], (ab["entries"], a_entries, b["entries"])
assert ab["stored_bytes"] < 2 * b["stored_bytes"]
print(f"  two programs: {ab['entries']} entries (not {a_entries + b['entries']}), {ab['stored_bytes']} bytes stored")
PY
for prog in a b; do
  "$XPACK" run $prog.pte --json > n.json
  "$XPACK" run $prog.pte --cache ab.xpc --json > c.json
  compare_runs n.json c.json
done
# 4-bit (qcint4 + qbint4), qd8 x qc8w, fp16, deconvolution, conv, weights in a .ptd.
for k in llm-q4 qd8-qc8w fp16 deconv conv ptd; do
  echo "== $k"
  if [ $k = ptd ]; then "$GEN" ptd -o ptd.pte --ptd w.ptd > /dev/null; D="--data w.ptd"; else "$GEN" $k -o $k.pte > /dev/null; D=""; fi
  "$XPACK" pack $k.pte $D -o $k.xpc > /dev/null || fail "$k: pack"
  "$XPACK" verify $k.xpc > /dev/null || fail "$k: verify"
  "$XPACK" run $k.pte $D --json > n.json || fail "$k: run"
  "$XPACK" run $k.pte $D --cache $k.xpc --json > c.json || fail "$k: run --cache"
  compare_runs n.json c.json || fail "$k"
  "$XPACK" verify $k.xpc --model $k.pte $D --json > v.json || fail "$k: verify --model"
  verify_model_covers v.json $k.xpc || fail "$k: verify --model coverage"
done
"$XPACK" verify ab.xpc --model a.pte b.pte --json > v.json || fail "two programs: verify --model"
verify_model_covers v.json ab.xpc || fail "two programs: verify --model coverage"
# Several delegates per method (xpack-genmodel --delegates): each method's slices chain through method
# values; every delegate of both methods is served, outputs identical.
echo "== llm --delegates 3"
"$GEN" llm --delegates 3 -o d3.pte > /dev/null
"$XPACK" inspect d3.pte --json | python3 -c '
import json, sys
m = json.load(sys.stdin)["programs"][0]["methods"]
n = [len(x["delegates"]) for x in m]
assert n == [3, 3], f"delegates per method: {n}, expected [3, 3]"' || fail "llm --delegates 3: not 3 delegates per method"
"$XPACK" pack d3.pte -o d3.xpc > /dev/null || fail "llm --delegates 3: pack"
"$XPACK" run d3.pte --json > n.json || fail "llm --delegates 3: run"
"$XPACK" run d3.pte --cache d3.xpc --json > c.json || fail "llm --delegates 3: run --cache"
compare_runs n.json c.json || fail "llm --delegates 3"
# Without its .ptd the program cannot resolve its weights: a clear error, exit 3.
set +e; "$XPACK" pack ptd.pte -o x.xpc 2> err.txt; st=$?; set -e
[ "$st" = 3 ] || fail "ptd without --data: exit $st"
grep -q "ptd.pte" err.txt || fail "ptd without --data: $(cat err.txt)"
# Apple targets: large regions aligned to 16 KiB.
"$XPACK" pack llm.pte -o llm16k.xpc --page-size 16384 > /dev/null
"$XPACK" dump --json llm16k.xpc | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["page_alignment"] == 16384
big = [r for r in d["regions"] if r["size"] >= 16384]
assert big and all(r["offset"] % 16384 == 0 for r in big), "16 KiB alignment"
assert all(r["offset"] % 64 == 0 for r in d["regions"])
print(f"  16 KiB pages: {len(big)} large regions page-aligned")'
"$XPACK" run llm.pte --cache llm16k.xpc --json > c16.json
compare_runs llm_nocache.json c16.json
st=$(status_of "$XPACK" pack llm.pte -o x.xpc --page-size 8000)
[ "$st" = 2 ] || fail "--page-size 8000: exit $st"
# Deep graphs (--layers): a 40-layer LLM-like program and a stack of 200 convolution blocks pack and hit in full,
# every weight named by its uses alone (weight_uses.c indexes them once per graph).
"$GEN" llm-q4 --layers 40 --size 2M -o deep_llm.pte > /dev/null
"$GEN" conv --layers 200 -o deep_conv.pte > /dev/null
for p in deep_llm deep_conv; do
  "$XPACK" -q pack "$p.pte" -o "$p.xpc"
  "$XPACK" run "$p.pte" --json > "$p.n.json"
  "$XPACK" run "$p.pte" --cache "$p.xpc" --json > "$p.c.json"
  compare_runs "$p.n.json" "$p.c.json"
done
# Delegate entries naming one blob: a few (decode calls its delegate 8 times) pack and hit in full; 504 of them,
# whose blobs add up to more than 64 times the file, are refused at open naming the delegate where the sum passes
# it (each blob is parsed and replayed: 2,000 such entries once took 70 s to pack a 563 KB file).
"$GEN" llm-q4 --size 16K --layers 16 --repeat-calls 8 -o repeat8.pte > /dev/null
"$GEN" llm-q4 --size 16K --layers 16 --repeat-calls 504 -o repeat504.pte > /dev/null
"$XPACK" -q pack repeat8.pte -o repeat8.xpc
"$XPACK" run repeat8.pte --json > repeat8.n.json
"$XPACK" run repeat8.pte --cache repeat8.xpc --json > repeat8.c.json
compare_runs repeat8.n.json repeat8.c.json
for cmd in "inspect repeat504.pte" "pack repeat504.pte -o repeat504.xpc"; do
  set +e; "$XPACK" $cmd > /dev/null 2> repeat504.err; st=$?; set -e
  [ "$st" = 3 ] && grep -q "repeat504.pte: execution_plan\[1\].delegates\[[0-9]*\].processed: .* more than 64 times the file's" repeat504.err ||
    fail "$cmd: exit $st: $(cat repeat504.err)"
  [ -e repeat504.xpc ] && fail "$cmd: wrote a cache"
done
echo "generated: ok"
