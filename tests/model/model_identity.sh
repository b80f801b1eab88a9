#!/usr/bin/env bash
# Model identity (issue #4 part 2): the cache records which programs it was built from; `run --cache`
# checks the program against them and reports a mismatch, and running another program with the cache
# never gives a wrong output (per-entry identities decide), even when the programs reuse tensor names.
XPACK=$1; GEN=$2
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

# check PACKED_FROM RUN_PROGRAM EXTRA_GEN_ARGS...: pack A, run B with A's cache, compare with B alone.
check() {
  local kind=$1 keys=$2; shift 2
  "$GEN" "$kind" --size 1M $keys -o a.pte > /dev/null
  "$GEN" "$kind" --size 1M $keys --variant B -o b.pte > /dev/null
  "$XPACK" -q pack a.pte -o a.xpc
  "$XPACK" run a.pte --cache a.xpc --json > a_cached.json
  "$XPACK" run b.pte --json > b_alone.json
  "$XPACK" run b.pte --cache a.xpc --json > b_cached.json 2> b_cached.err
  "$XPACK" run b.pte --cache a.xpc > b_cached.txt 2> b_cached_text.err
  python3 - "$kind $keys" <<'PY'
import json, sys
label = sys.argv[1]
a = json.load(open("a_cached.json"))
alone, cached = json.load(open("b_alone.json")), json.load(open("b_cached.json"))
assert a["programs"] == [{"file": "a.pte", "built_from": True}], a["programs"]
assert a["misses"] == 0 and a["hits"] > 0
assert alone["failed"] == 0 and cached["failed"] == 0
for x, y in zip(alone["delegates_detail"], cached["delegates_detail"]):
    assert x["output_xxh3"] == y["output_xxh3"], f"{label}: wrong output with another program's cache: {x['method']}"
# every layer but the head is the same tensor: served; the head differs: missed and packed by XNNPACK
assert cached["hits"] > 0 and cached["misses"] > 0 and cached["misses"] == cached["misses_not_found"], cached
# and each miss names the weight and why: B's head is a weight A's cache never held
missed = [m for d in cached["delegates_detail"] for m in d["missed"]]
assert len(missed) == cached["misses"] and all(m["reason"] == "not_found" and m["kernel"] and m["family"] is None
                                                and "holds no entry for this weight" in m["why"] for m in missed), missed
prog = cached["programs"][0]
print(f"  {label}: B with A's cache: {cached['hits']} hits, {cached['misses']} misses (the head), outputs identical;"
      f" built_from={prog['built_from']}")
PY
}

# ExecuTorch's content keys (SHA-256 of the bytes): B's program names other keys, so it is another program.
check llm ""
grep -q "is not one the cache was built from (a.pte (" b_cached_text.err || fail "no model-identity warning: $(cat b_cached_text.err)"
grep -q "^  missed: kernel .*: not found: the cache holds no entry for this weight" b_cached.txt ||
  fail "run does not say which weight missed: $(cat b_cached.txt)"
python3 -c '
import json; p = json.load(open("b_cached.json"))["programs"][0]
assert p["file"] == "b.pte" and p["built_from"] is False and "a.pte" in p["message"], p'
check llm-q4 ""
# Keys that name a tensor, not its bytes (module paths): A and B are the same program flatbuffer with
# other weights in segments, so identity cannot tell them apart; the content hash in each identity does.
check llm --name-keys
python3 -c '
import json; p = json.load(open("b_cached.json"))["programs"][0]
assert p["built_from"] is True, p  # same flatbuffer: only the per-entry identities protect this case'
check llm-q4 --name-keys
"$XPACK" inspect b.pte --json | grep -q '"layers.0.head.weight#xxh3-128:' || fail "module-path keys do not carry the content hash"

# Keys so long that a weight's identity (key, content hash, packing suffix) passes the 1023 bytes a binding takes:
# those weights are named by nothing, pack warns and records none, and a run with the cache packs them as without
# it. Keys a little shorter still hit in full. (A 1,000-byte key once failed the pack as a usage error, exit 2,
# with a message that had lost its cause.)
"$GEN" llm --size 1M --name-keys --key-length 900 -o k900.pte > /dev/null
"$GEN" llm --size 1M --name-keys --key-length 1000 -o k1000.pte > /dev/null
for k in k900 k1000; do
  "$XPACK" pack $k.pte -o $k.xpc 2> $k.pack.err || fail "pack $k: $(cat $k.pack.err)"
  "$XPACK" run $k.pte --json > $k.alone.json
  "$XPACK" run $k.pte --cache $k.xpc --json > $k.cached.json
done
compare_runs k900.alone.json k900.cached.json
python3 - <<'PY'
import json
n, c = json.load(open("k1000.alone.json")), json.load(open("k1000.cached.json"))
for a, b in zip(n["delegates_detail"], c["delegates_detail"]):
    assert a["output_xxh3"] == b["output_xxh3"], f"keys of 1,000 bytes: other outputs with the cache: {a['method']}"
assert c["hits"] == 0 and c["misses"] == c["misses_unbound"] > 0, f"keys of 1,000 bytes: expected every weight unnamed: {c}"
print(f"  keys of 1,000 bytes: {c['misses']} look-ups miss as unbound, outputs identical")
PY
grep -q "weights not recorded: a named key makes the identity longer than 1023 bytes" k1000.pack.err ||
  fail "pack does not say why weights with long keys are not recorded: $(cat k1000.pack.err)"

echo "model identity: ok"
