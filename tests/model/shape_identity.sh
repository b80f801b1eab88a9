#!/usr/bin/env bash
# The same weight bytes in another shape or node are never served each other's packing. XNNPACK's seed is an XOR
# of sizes, equal for an FC of [8, 17] and one of [17, 8], for a Conv2d 2x2 of 16 input channels and a 1x2 one of
# 64 in two groups, and for a 1x1 Conv2d of 3 -> 16 and an FC of [24, 2]; the packed sizes are equal too. Before
# 2026-11-29 a float weight was named by its bytes alone, and each of these was served the other's packing with
# every look-up a hit (wrong outputs, exit 0), a program using one weight in two shapes even by its own cache.
# Now every weight's identity holds its dims and nodes (FORMAT.md section 6).
XPACK=$1; GEN=$2
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

for kind in shapes-a shapes-b shapes-tied; do
  "$GEN" "$kind" -o "$kind.pte" > /dev/null
  "$XPACK" run "$kind.pte" --json > "$kind.nocache.json"
done
# The programs share bytes: a.pte and b.pte name three weights by the same content keys.
python3 - <<'PY' || fail "shapes-a and shapes-b do not share weight bytes"
import re
a, b = open("shapes-a.pte", "rb").read(), open("shapes-b.pte", "rb").read()
keys = lambda data: set(re.findall(rb"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])", data))
shared = keys(a) & keys(b)
assert len(shared) >= 4, len(shared)  # three filters and the convolution's bias
PY

# outputs_equal NOCACHE CACHE: every delegate's outputs bit for bit; prints hits and misses.
outputs_equal() {
  python3 - "$1" "$2" <<'PY'
import json, sys
n, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert n["failed"] == 0 and c["failed"] == 0, "a delegate failed"
assert [x["output_xxh3"] for x in n["delegates_detail"]] == [x["output_xxh3"] for x in c["delegates_detail"]], \
    "outputs differ from the run without a cache: another shape's packing was served"
print(f"  {c['hits']} hits, {c['misses']} misses, outputs identical")
PY
}

# b.pte with a.pte's cache: nothing of a's fits b, so every look-up misses and b computes its own outputs.
"$XPACK" -q pack shapes-a.pte -o a.xpc
"$XPACK" run shapes-b.pte --cache a.xpc --json > b_with_a.json
outputs_equal shapes-b.nocache.json b_with_a.json || fail "shapes-b with shapes-a's cache"
python3 -c 'import json; c = json.load(open("b_with_a.json")); assert c["hits"] == 0 and c["misses"] >= 3, c["hits"]' ||
  fail "shapes-b hit an entry of shapes-a"

# Packed together, in either order: both packings kept, each program hits all of its own.
for order in "shapes-a.pte shapes-b.pte" "shapes-b.pte shapes-a.pte"; do
  # shellcheck disable=SC2086
  "$XPACK" -q pack $order -o ab.xpc
  for kind in shapes-a shapes-b; do
    "$XPACK" run "$kind.pte" --cache ab.xpc --json > with_ab.json
    compare_runs "$kind.nocache.json" with_ab.json || fail "$kind with the cache of both ($order)"
  done
done

# One weight in two shapes in one program: it has no single name (xpack:ambiguous), so its own cache serves it
# nothing, and another cache's misses answer nothing with the first shape's packing either.
"$XPACK" inspect shapes-tied.pte --json > tied_inspect.json
python3 - <<'PY' || fail "inspect does not call the tied weight ambiguous"
import json
d = json.load(open("tied_inspect.json"))
consts = d["programs"][0]["methods"][0]["delegates"][0]["constants"]
assert any(c["ambiguous"] for c in consts), consts
PY
"$XPACK" -q pack shapes-tied.pte -o tied.xpc
"$XPACK" run shapes-tied.pte --cache tied.xpc --json > tied_own.json
outputs_equal shapes-tied.nocache.json tied_own.json || fail "shapes-tied with its own cache"
"$XPACK" run shapes-tied.pte --cache a.xpc --json > tied_other.json
outputs_equal shapes-tied.nocache.json tied_other.json || fail "shapes-tied with an unrelated cache"

# One pointer, two names: two module-path keys on one segment (ExecuTorch stores equal bytes once) used as FC
# [8, 17] and [17, 8], or bytes that are an FC's weight and a quantized FC's scales. XNNPACK keys by pointer, and
# the last binding once named the pointer for every use: the program's own cache served one shape's packing to the
# other, and a cache packed with it served it to a clean program using one of the keys. Now such a pointer is
# bound to nothing (xpack:ambiguous) by the replay, as the ExecuTorch adapter binds it.
for kind in shapes-alias shapes-alias-one shapes-scale-alias; do
  "$GEN" "$kind" -o "$kind.pte" > /dev/null
  "$XPACK" run "$kind.pte" --json > "$kind.nocache.json"
done
"$XPACK" -q pack shapes-alias.pte -o alias.xpc
"$XPACK" run shapes-alias.pte --cache alias.xpc --json > alias_own.json
outputs_equal shapes-alias.nocache.json alias_own.json || fail "shapes-alias with its own cache"
"$XPACK" -q pack shapes-alias.pte shapes-alias-one.pte -o alias_both.xpc
"$XPACK" run shapes-alias-one.pte --cache alias_both.xpc --json > one_with_both.json
compare_runs shapes-alias-one.nocache.json one_with_both.json || fail "shapes-alias-one with the cache of both"
"$XPACK" -q pack shapes-scale-alias.pte -o scale_alias.xpc
"$XPACK" run shapes-scale-alias.pte --cache scale_alias.xpc --json > scale_alias_own.json
outputs_equal shapes-scale-alias.nocache.json scale_alias_own.json || fail "shapes-scale-alias with its own cache"
# A bias with no single name: its bytes are also another FC's weight, so the replay binds it to xpack:ambiguous.
# Keys naming a bias so once counted as named: a key (seed, weight, xpack:ambiguous) stood for every bias that
# weight was used with, and one packing was recorded and served for all of them, in the program's own cache
# (shapes-bias-two's two FC [8, 17]) and in another program's (shapes-bias-b with shapes-bias-a's).
for kind in shapes-bias-a shapes-bias-b shapes-bias-two; do
  "$GEN" "$kind" -o "$kind.pte" > /dev/null
  "$XPACK" run "$kind.pte" --json > "$kind.nocache.json"
  "$XPACK" -q pack "$kind.pte" -o "$kind.xpc"
  "$XPACK" dump "$kind.xpc" > "$kind.dump"
  ! grep -q "xpack:ambiguous" "$kind.dump" || fail "$kind: an entry names a bias xpack:ambiguous"
  "$XPACK" run "$kind.pte" --cache "$kind.xpc" --json > "$kind.own.json"
  outputs_equal "$kind.nocache.json" "$kind.own.json" || fail "$kind with its own cache"
done
"$XPACK" run shapes-bias-b.pte --cache shapes-bias-a.xpc --json > bias_b_with_a.json
outputs_equal shapes-bias-b.nocache.json bias_b_with_a.json || fail "shapes-bias-b with shapes-bias-a's cache"
echo "shape_identity: ok"
