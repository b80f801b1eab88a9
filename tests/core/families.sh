#!/usr/bin/env bash
# Packing families, with one change at a time made on purpose and every checksum re-sealed (xpc_tamper), so
# that the loader reacts to that change and not to damage:
#   - a family's recorded probe differs from this machine's: that family's entries are refused for the probe
#     reason (0 hits, refused_probe), the other families are still served, outputs are bit-identical to a
#     run without a cache; verify exits 1 naming the family;
#   - another XNNPACK build identifier: everything refused as incompatible, outputs identical, verify exits 1;
#   - a family name this xpack does not know: refused as unknown, never probed;
#   - entries naming no family (as a format 1.0 file): refused (refused_no_family).
# On generated ExecuTorch programs (fp32 LLM-like, 4-bit LLM-like with two families, qd8 x qc8w) through
# `xpack run`, and on the C-built demo subgraphs (convolution, deconvolution, qs8) through xpack-subgraphs.
XPACK=$1; GEN=$2; SUB=$3; TAMPER=$4
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

# check_run NOCACHE.json CACHE.json EXPECT: outputs identical; EXPECT is a Python expression over c (the
# cached run's JSON), fam (its families by name) and t (the family named $NAME) that must hold.
check_run() {
  python3 - "$@" <<'PY'
import json, os, sys
n, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
fam = {f["name"]: f for f in c["families"]}
name = os.environ.get("NAME")  # the tampered family, when there is one
t = fam.get(name)
assert n["failed"] == 0 and c["failed"] == 0, "a delegate failed"
for a, b in zip(n["delegates_detail"], c["delegates_detail"]):
    assert a["output_xxh3"] == b["output_xxh3"] and a["output_xxh3"], f"outputs differ: {a['method']}#{a['index']}"
assert eval("(" + sys.argv[3] + ")"), (sys.argv[3], {k: (v["status"], v["reason"], v["hits"], v["refused"]) for k, v in fam.items()},
                           {k: c[k] for k in ("lookups", "hits", "misses_refused", "refused_probe", "refused_no_family")})
PY
}

for k in llm llm-q4 qd8-qc8w; do
  echo "== $k"
  case $k in llm*) size="--size 256K" ;; *) size="" ;; esac
  "$GEN" $k -o $k.pte $size > /dev/null
  "$XPACK" pack $k.pte -o $k.xpc > /dev/null || fail "$k: pack"
  "$XPACK" run $k.pte --json > n.json
  "$XPACK" run $k.pte --cache $k.xpc --json > c.json
  check_run n.json c.json 'c["hits"] == c["lookups"] > 0 and all(f["status"] == "served" and f["hits"] > 0 for f in fam.values())'
  families=$("$XPACK" dump --json $k.xpc | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["families"]))')
  [ "$families" -ge 1 ] || fail "$k: no family recorded"
  [ $k != llm-q4 ] || [ "$families" = 2 ] || fail "llm-q4: expected two families (qc4w and qb4w), got $families"

  # One family's probe tampered at a time: that family refused for the probe reason, the others served.
  for i in $(seq 0 $((families - 1))); do
    cp $k.xpc t.xpc; "$TAMPER" t.xpc probe $i
    name=$("$XPACK" dump --json t.xpc | python3 -c "import json,sys; print(json.load(sys.stdin)['families'][$i]['name'])")
    "$XPACK" verify t.xpc > v.txt && fail "$k: verify accepted a tampered probe"
    grep -q "family $name: probe_differs" v.txt || fail "$k: verify does not name the family: $(cat v.txt)"
    grep -q "sound" v.txt || fail "$k: a re-sealed file must be structurally sound: $(cat v.txt)"
    "$XPACK" run $k.pte --cache t.xpc --json > c.json
    NAME="$name" check_run n.json c.json '
t["status"] == "refused" and t["reason"] == "probe_differs" and t["hits"] == 0 and t["refused"] > 0
and "probe" in t["message"] and c["refused_probe"] == t["refused"] == c["misses_refused"]
and all(f["status"] == "served" and f["hits"] > 0 for k, f in fam.items() if k != name)
and c["hits"] + c["refused_probe"] == c["lookups"]
and [(m["reason"], m["family"]) for d in c["delegates_detail"] for m in d["missed"]] == [("probe", name)] * c["misses"]'
    "$XPACK" run $k.pte --cache t.xpc > t.txt
    grep -q "family $name: probe_differs, 0 hits" t.txt || fail "$k: run does not name the refused family: $(cat t.txt)"
    grep -q "^  missed: kernel .*: refused: its packing family $name is refused on this machine" t.txt ||
      fail "$k: run does not say why each weight missed: $(cat t.txt)"
  done

  # Another XNNPACK build: the whole file refused as incompatible.
  cp $k.xpc t.xpc; "$TAMPER" t.xpc build-id
  "$XPACK" verify t.xpc > v.txt && fail "$k: verify accepted another build id"
  grep -q "whole file is refused: packed by another XNNPACK build" v.txt || fail "$k: verify: $(cat v.txt)"
  "$XPACK" run $k.pte --cache t.xpc --json > c.json
  check_run n.json c.json 'c["hits"] == 0 and c["cache_refused"] and "XNNPACK build" in c["cache_refused"]
and c["misses_refused"] == c["lookups"] > 0 and c["refused_probe"] == 0
and all(f["status"] == "refused" and f["reason"] == "file_refused" for f in fam.values())
and [m["reason"] for d in c["delegates_detail"] for m in d["missed"]] == ["incompatible"] * c["misses"]'

  # A family name no xpack of this version knows.
  cp $k.xpc t.xpc; "$TAMPER" t.xpc name 0
  "$XPACK" run $k.pte --cache t.xpc --json > c.json
  check_run n.json c.json 'sum(f["reason"] == "unknown_family" and f["local_probe"] == "0000000000000000" and f["hits"] == 0
          for f in fam.values()) == 1 and c["refused_probe"] > 0'

  # One family's recorded probe keys changed (format 1.3): the probe packs alike but XNNPACK keys it otherwise,
  # so that family is refused as keys_differ (no entry of it would be found), the others served.
  for i in $(seq 0 $((families - 1))); do
    cp $k.xpc t.xpc; "$TAMPER" t.xpc probe-keys $i
    name=$("$XPACK" dump --json t.xpc | python3 -c "import json,sys; print(json.load(sys.stdin)['families'][$i]['name'])")
    "$XPACK" verify t.xpc > v.txt && fail "$k: verify accepted other probe keys"
    grep -q "family $name: keys_differ" v.txt || fail "$k: verify does not name the family: $(cat v.txt)"
    "$XPACK" run $k.pte --cache t.xpc --json > c.json
    NAME="$name" check_run n.json c.json '
t["status"] == "refused" and t["reason"] == "keys_differ" and t["hits"] == 0 and "keys" in t["message"]
and t["packed_keys"] != t["local_keys"] and c["refused_probe"] == c["misses"] > 0
and all(f["status"] == "served" and f["hits"] > 0 and f["packed_keys"] == f["local_keys"] for k, f in fam.items() if k != name)'
  done
  # A file of format 1.2 records no probe keys: its families are decided by the packed bytes alone, as before.
  cp $k.xpc t.xpc; "$TAMPER" t.xpc as-1.2
  "$XPACK" verify t.xpc > v.txt || fail "$k: a 1.2 file: $(cat v.txt)"
  "$XPACK" run $k.pte --cache t.xpc --json > c.json
  check_run n.json c.json 'c["hits"] == c["lookups"] > 0 and all(f["packed_keys"] == "0000000000000000" for f in fam.values())'
  # ... and any value in that then reserved field is a broken rule; a 1.3 file without keys is one too.
  "$TAMPER" t.xpc probe-keys 0
  "$XPACK" verify t.xpc > v.txt && fail "$k: verify accepted a 1.2 file with its reserved family field set"
  grep -q "reserved field at record offset 16 must be 0 in a file of version 1.2" v.txt || fail "$k: $(cat v.txt)"
  cp $k.xpc t.xpc; "$TAMPER" t.xpc no-probe-keys
  "$XPACK" verify t.xpc > v.txt && fail "$k: verify accepted a 1.3 file without probe keys"
  grep -q "probe keys 0: a writer of version 1.3 records them" v.txt || fail "$k: $(cat v.txt)"
  # ... and the loader refuses such a family record rather than skip the keys check (FORMAT.md 8).
  "$XPACK" run $k.pte --cache t.xpc --json > c.json
  check_run n.json c.json 'c["hits"] == 0 and c["refused_probe"] == c["lookups"] > 0
and all(f["reason"] == "unknown_family" and "probe keys 0" in f["message"] for f in fam.values())'

  # Entries naming no family (what a format 1.0 writer wrote): refused, and verify names them.
  cp $k.xpc t.xpc; "$TAMPER" t.xpc no-family
  "$XPACK" verify t.xpc > v.txt && fail "$k: verify accepted entries without a family"
  grep -q "names no packing family" v.txt || fail "$k: verify: $(cat v.txt)"
  "$XPACK" run $k.pte --cache t.xpc --json > c.json
  check_run n.json c.json 'c["hits"] == 0 and c["refused_no_family"] == c["lookups"] > 0'
done

# The demo subgraphs: convolution, deconvolution (packed before XNNPACK asks), qs8 x qc8w, qd8 x qc4w.
echo "== demo subgraphs"
"$SUB" pack demo.xpc > pack.txt
"$SUB" run > nocache.txt
families=$("$XPACK" dump --json demo.xpc | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["families"]))')
# One more where XNNPACK offers depthwise weights to the cache (the XNNPACKs of ExecuTorch 1.x).
expected=$((5 + $(field caches_depthwise < pack.txt)))
[ "$families" = $expected ] || fail "demo: expected $expected families, got $families"
for i in $(seq 0 $((families - 1))); do
  cp demo.xpc t.xpc; "$TAMPER" t.xpc probe $i
  "$SUB" run --cache t.xpc > t.txt || fail "demo: run with family $i tampered"
  diff <(outputs nocache.txt) <(outputs t.txt) > /dev/null || fail "demo: outputs differ with family $i tampered"
  [ "$(grep -c '| status probe_differs hits 0 refused [1-9]' t.txt)" = 1 ] || fail "demo: family $i: $(grep ^family t.txt)"
  [ "$(grep -c '| status served hits [1-9]' t.txt)" = $((families - 1)) ] || fail "demo: others: $(grep ^family t.txt)"
  s=$(grep '^stats ' t.txt)
  [ "$(echo "$s" | field refused_probe)" -gt 0 ] && [ "$(echo "$s" | field refused_mismatch)" = 0 ] || fail "demo: $s"
done
cp demo.xpc t.xpc; "$TAMPER" t.xpc build-id
"$SUB" run --cache t.xpc > t.txt
diff <(outputs nocache.txt) <(outputs t.txt) > /dev/null || fail "demo: outputs differ with another build id"
grep -q "^refused packed by another XNNPACK build" t.txt || fail "demo: build id: $(head -1 t.txt)"
[ "$(echo "$(grep '^stats ' t.txt)" | field hits)" = 0 ] || fail "demo: hits with another build id"
echo "families: ok"
