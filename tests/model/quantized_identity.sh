#!/usr/bin/env bash
# A quantized weight's cache entry holds what XNNPACK packs with it besides its bytes (xpack_et_packing_suffix):
# a program whose int8 weights are byte for byte another's but whose scales differ (the scales' constant doubled,
# its content key written again as ExecuTorch would) is never served the other's packing. Once, it was: both
# weights had one name, and the run hit every look-up with the first program's scales (wrong outputs, exit 0).
# Also: the two programs packed together keep both packings, each hit by its own program, and export names each
# weight as ExecuTorch does and skips the name the two share.
XPACK=$1; GEN=$2
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

"$GEN" qd8-qc8w -o a.pte > /dev/null
"$XPACK" inspect a.pte --json > inspect.json
python3 - <<'PY' || fail "could not make b.pte"
import hashlib, json, struct
d = json.load(open("inspect.json"))
scales = [c for c in d["programs"][0]["methods"][0]["delegates"][0]["constants"] if c["scale"]]
assert scales, "no scale constant"
c = scales[0]
key = c["identity"]
assert key.startswith("scale_") and len(key) == 70, key
data = bytearray(open("a.pte", "rb").read())
off, size = c["offset"], c["size"]
old = bytes(data[off:off + size])
assert hashlib.sha256(old).hexdigest() == key[6:], "the scale constant is not at its offset"
new = struct.pack("<%df" % (size // 4), *[2.0 * x for x in struct.unpack("<%df" % (size // 4), old)])
data[off:off + size] = new
old_key, new_key = key[6:].encode(), hashlib.sha256(new).hexdigest().encode()
assert data.count(old_key) >= 1
open("b.pte", "wb").write(bytes(data).replace(old_key, new_key))
PY
"$XPACK" run a.pte --json > a_nocache.json
"$XPACK" run b.pte --json > b_nocache.json
python3 -c '
import json, sys
a, b = json.load(open("a_nocache.json")), json.load(open("b_nocache.json"))
assert [x["output_xxh3"] for x in a["delegates_detail"]] != [x["output_xxh3"] for x in b["delegates_detail"]], "same outputs"
' || fail "b.pte computes what a.pte does: the scales were not changed"

# b.pte with a.pte's cache: the weight with other scales misses, the other hits; outputs are b's own.
"$XPACK" -q pack a.pte -o a.xpc
"$XPACK" run b.pte --cache a.xpc --json > b_with_a.json
python3 - <<'PY' || fail "b.pte with a.pte's cache"
import json
n, c = json.load(open("b_nocache.json")), json.load(open("b_with_a.json"))
assert [x["output_xxh3"] for x in n["delegates_detail"]] == [x["output_xxh3"] for x in c["delegates_detail"]], \
    "outputs differ from b.pte's own: a.pte's packing was served"
assert c["misses"] >= 1 and c["hits"] >= 1, (c["hits"], c["misses"])
print(f"  b.pte with a.pte's cache: {c['hits']} hits, {c['misses']} misses, outputs b's own")
PY
# Packed together: both packings kept, each program hits all of its own.
"$XPACK" -q pack a.pte b.pte -o ab.xpc
"$XPACK" run b.pte --cache ab.xpc --json > b_with_ab.json
compare_runs b_nocache.json b_with_ab.json || fail "b.pte with the cache of both"
"$XPACK" run a.pte --cache ab.xpc --json > a_with_ab.json
compare_runs a_nocache.json a_with_ab.json || fail "a.pte with the cache of both"
# Export: ExecuTorch names a weight by its bytes' key alone, which the two weights share: that name is skipped
# as ambiguous; the other is written.
"$XPACK" export --executorch ab.xpc ab.et --json 2> /dev/null > export.json || fail "export"
python3 - <<'PY' || fail "export of the cache of both"
import json
e = json.load(open("export.json"))
assert e["skipped"]["ambiguous_name"] == 2 and e["exported"] >= 1, e["skipped"]
print(f"  export: {e['exported']} written, {e['skipped']['ambiguous_name']} skipped as ambiguous")
PY
echo "quantized_identity: ok"
