#!/usr/bin/env bash
# `xpack run --cache` names each missed weight and says why it missed. A cache holding every weight of a
# program under other seeds (reseed_cache: as if packed for other operator parameters or by another XNNPACK)
# misses each one; each miss names the seed the cache holds it under, and XNNPACK's packing of a miss is kept
# once per key (decode's misses, the weights prefill missed, are answered with prefill's packing). Without -v a
# run names a few misses and says how many it left out; with -v, all. Outputs stay those of a run without a
# cache. An entry whose key hash no longer matches its key (re-sealed) is named as an entry with this very key
# that look-ups cannot reach. A file refused whole counts every look-up under its refusal.
XPACK=$1; GEN=$2; RESEED=$3; TAMPER=$4
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

"$GEN" llm -o llm.pte > /dev/null
"$XPACK" -q pack llm.pte -o llm.xpc
"$RESEED" llm.xpc other.xpc > /dev/null || fail "reseed_cache"
"$XPACK" run llm.pte --json > n.json
"$XPACK" run llm.pte --cache other.xpc --json > c.json
"$XPACK" run llm.pte --cache other.xpc > c.txt
"$XPACK" -v run llm.pte --cache other.xpc > v.txt 2> /dev/null
"$XPACK" dump --json llm.xpc > dump.json
python3 - <<'PY'
import json, re
n, c, dump = json.load(open("n.json")), json.load(open("c.json")), json.load(open("dump.json"))
for a, b in zip(n["delegates_detail"], c["delegates_detail"]):
    assert a["output_xxh3"] == b["output_xxh3"], "outputs differ"
assert c["hits"] == 0 and c["misses"] == c["misses_not_found"] == c["lookups"] > 8, c
# decode shares every weight of prefill: its misses are answered with prefill's packing, kept once per key
first = {}
for d in c["delegates_detail"]:
    new_keys = {(m["seed"], m["kernel"], m["bias"]) for m in d["missed"]} - first.keys()
    for k in new_keys: first[k] = d["method"]
    assert d["misses_reused"] == d["misses"] - len(new_keys), d
    assert (d["heap_fallback_bytes"] == 0) == (not new_keys), d
assert c["misses_reused"] == c["misses"] - len(first) > 0, c
assert c["heap_fallback_bytes"] == sum(e["size"] for e in dump["entries"]), (c["heap_fallback_bytes"], len(first))
seeds = {(e["kernel"], e["bias"]): e["seed"] for e in dump["entries"]}
missed = [m for d in c["delegates_detail"] for m in d["missed"]]
assert len(missed) == c["misses"], (len(missed), c["misses"])
for m in missed:
    packed_seed = seeds[(m["kernel"], m["bias"])]
    assert m["reason"] == "not_found" and m["family"] is None and packed_seed == m["seed"], m
    assert f"holds this weight under seed 0x{m['seed'] ^ 1:08x}, not 0x{m['seed']:08x}" in m["why"], m
text = open("c.txt").read()
lines = re.findall(r"^  missed: kernel .*: not found: the cache holds this weight under seed", text, re.M)
assert len(lines) == 8, text
left_out = c["misses"] - 8
assert f"{left_out} more missed look-up{'s' if left_out != 1 else ''} not named here" in text, text
every = re.findall(r"^  missed: kernel ", open("v.txt").read(), re.M)
assert len(every) == c["misses"], (len(every), c["misses"])
print(f"  {c['misses']} misses, each named with the seed the cache holds the weight under; 8 named without -v;"
      f" {c['misses_reused']} answered with an earlier miss's packing, {c['heap_fallback_bytes']} bytes kept once")
PY
cp llm.xpc hash.xpc && "$TAMPER" hash.xpc key-hash || fail "xpc_tamper key-hash"
"$XPACK" run llm.pte --cache hash.xpc --json > h.json || fail "run with a wrong key hash"
python3 - <<'PY'
import json
h = json.load(open("h.json"))
missed = [m for d in h["delegates_detail"] for m in d["missed"]]
assert missed and all(m["reason"] == "not_found" and "look-ups cannot reach" in m["why"] and "xpack verify" in m["why"]
                      for m in missed), missed
print(f"  a wrong key hash: {len(missed)} miss(es), named as an entry of this very key look-ups cannot reach")
PY
# A file refused whole (here: another XNNPACK build's, whose keys carry other seeds) counts every look-up under
# that refusal (xpack_stats: refused_incompatible), not as weights it does not hold.
cp other.xpc other_build.xpc && "$TAMPER" other_build.xpc build-id || fail "xpc_tamper build-id"
"$XPACK" run llm.pte --cache other_build.xpc --json > b.json || fail "run with another build's cache"
python3 - <<'PY'
import json
b = json.load(open("b.json"))
assert "XNNPACK build" in b["cache_refused"], b["cache_refused"]
assert b["hits"] == 0 and b["misses_not_found"] == 0 and b["refused_incompatible"] == b["lookups"] > 8, b
missed = [m for d in b["delegates_detail"] for m in d["missed"]]
assert missed and all(m["reason"] == "incompatible" for m in missed), missed[:2]
print(f"  another build's cache: {b['refused_incompatible']} of {b['lookups']} look-ups refused as incompatible")
PY
