#!/usr/bin/env bash
# One content key, one content, across the programs packed into one cache. A named key of 64 hex digits is
# trusted as the SHA-256 of its bytes (docs/TRUST.md); two programs whose named_data give one such key
# different bytes were packed into one cache with the first program's weight under the key, and the second then
# ran with it: other outputs, exit 0 (found by a review). `pack` must refuse the pair (exit 3, naming both
# files and the key, writing nothing); a copy of a program with the same bytes under the same keys still packs
# with it, and so do two programs sharing every layer's keys over the same bytes (llm --variant B). A program and a
# .ptd holding one content key are held to the same rule.
XPACK=$1; GEN=$2
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

"$GEN" qd8-qc8w -o a.pte > /dev/null
"$XPACK" inspect a.pte --json > a.json
# The file offset and key of the first weight held in the program's own named_data.
read -r offset key < <(python3 -c '
import json, sys
for d in json.load(open(sys.argv[1]))["programs"][0]["methods"][0]["delegates"]:
    for c in d.get("constants", []):
        if c["source"] == "pte named_data" and not c["scale"]:
            print(c["offset"] + 7, c["identity"].split("|")[0]); sys.exit(0)
sys.exit("no weight in the program'"'"'s named_data")' a.json)
cp a.pte b.pte
python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x5a]))' b.pte "$offset"
cmp -s a.pte b.pte && fail "b.pte is a.pte"

st=$(status_of "$XPACK" pack a.pte b.pte -o ab.xpc)
[ "$st" = 3 ] || fail "pack of two programs giving key $key different bytes: exit $st, expected 3"
"$XPACK" pack a.pte b.pte -o ab.xpc 2> ab.err > /dev/null || true
grep -q "b.pte: named_data key $key holds .* bytes that differ from the .* bytes a.pte holds under the same key" ab.err ||
  fail "the refusal names neither both files nor the key: $(cat ab.err)"
[ ! -e ab.xpc ] || fail "a refused pack wrote ab.xpc"
echo "shared_content_keys: refused: $(head -c 200 ab.err)"

cp a.pte a_copy.pte
"$XPACK" pack a.pte a_copy.pte -o copy.xpc > /dev/null || fail "pack of a program and its copy (same keys, same bytes)"
"$GEN" llm --size 1M -o la.pte > /dev/null
"$GEN" llm --size 1M --variant B -o lb.pte > /dev/null
"$XPACK" pack la.pte lb.pte -o lab.xpc > /dev/null || fail "pack of two programs sharing their layers' keys and bytes"
"$XPACK" run lb.pte --json > lb.none.json
"$XPACK" run lb.pte --cache lab.xpc --json > lb.cache.json
compare_runs lb.none.json lb.cache.json

# A program holding one key twice: its look-ups find one of the two entries (the first in the named_data vector),
# and that entry is the one compared. Of two weights of a.pte of one size, one is renamed as the other: in one of
# the two programs so made the look-ups find the renamed key's own bytes, which a.pte holds under it too (packs
# with a.pte, outputs as without a cache), in the other the other weight's bytes (refused). inspect tells which is
# which: the file offset both weights' look-ups resolve to.
offsets() { "$XPACK" inspect "$1" --json | python3 -c '
import json, sys
for d in json.load(sys.stdin)["programs"][0]["methods"][0]["delegates"]:
    for c in d.get("constants", []):
        if c["source"] == "pte named_data" and not c["scale"]: print(c["size"], c["offset"], c["identity"].split("|")[0])'; }
offsets a.pte > a.offsets || fail "inspect a.pte"
read -r k1 o1 k2 o2 < <(sort -u -k1,1n -k2,2n a.offsets |
  awk 'p == $1 && k != $3 { print k, o, $3, $2; exit } { p = $1; k = $3; o = $2 }') || fail "a.pte has no two weights of one size"
python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
k1, k2 = sys.argv[2].encode(), sys.argv[3].encode()
if len(k1) != len(k2) or k1 in k2 or k2 in k1 or d.count(k1) != d.count(k2):
    sys.exit("the two keys are not alike enough to swap in place")
open("b1.pte", "wb").write(d.replace(k2, k1))
open("b2.pte", "wb").write(d.replace(k1, k2))' a.pte "$k1" "$k2" || fail "could not write b1.pte and b2.pte"
for b in b1 b2; do
  if [ $b = b1 ]; then key=$k1 own=$o1; else key=$k2 own=$o2; fi
  offsets $b.pte > $b.offsets || fail "inspect $b.pte"
  found=$(awk -v k="$key" '$3 == k { print $2 }' $b.offsets | sort -u)
  [ -n "$found" ] && [ "$(echo "$found" | wc -l)" = 1 ] || fail "$b.pte: the look-ups of its duplicate key resolve to offsets $found"
  if [ "$found" = "$own" ]; then
    "$XPACK" pack a.pte $b.pte -o a$b.xpc > /dev/null 2>&1 ||
      fail "pack of a program whose duplicate key's found entry holds the bytes a.pte holds under it"
    "$XPACK" run $b.pte --json > $b.none.json
    "$XPACK" run $b.pte --cache a$b.xpc --json > $b.cache.json
    # The two weights now share one pointer in two shapes: bound to no name (libpack/et/IDENTITY.md), they miss
    # as unbound, and the outputs stay the program's own.
    python3 -c '
import json, sys
n, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert c["failed"] == 0 and [d["output_xxh3"] for d in n["delegates_detail"]] == [d["output_xxh3"] for d in c["delegates_detail"]]' \
      $b.none.json $b.cache.json || fail "$b.pte gives other outputs with a$b.xpc than without a cache"
    packed=$((${packed:-0} + 1))
  else
    st=$(status_of "$XPACK" pack a.pte $b.pte -o a$b.xpc)
    [ "$st" = 3 ] || fail "pack of a program whose duplicate key's found entry holds other bytes than a.pte's: exit $st, expected 3"
    [ ! -e a$b.xpc ] || fail "a refused pack wrote a$b.xpc"
    refused=$((${refused:-0} + 1))
  fi
done
[ "${packed:-0}" = 1 ] && [ "${refused:-0}" = 1 ] || fail "of b1 and b2, ${packed:-0} packed and ${refused:-0} were refused, expected one each"

# A program's named_data and a .ptd giving one content key other bytes: ExecuTorch reads the .ptd's, and a cache
# of those would be served to the program run alone, whose copy the key then finds. Refused; the same bytes pack.
"$GEN" llm --size 256K -o c.pte > /dev/null
"$GEN" llm --size 256K --ptd c.ptd -o c_with_ptd.pte > /dev/null
python3 -c 'd = bytearray(open("c.ptd", "rb").read()); d[len(d) // 2::16] = bytes(b ^ 1 for b in d[len(d) // 2::16]); open("c_other.ptd", "wb").write(d)'
"$XPACK" pack c.pte --data c.ptd -o c_same.xpc > /dev/null || fail "pack of a program and a .ptd holding its keys' bytes"
st=$(status_of "$XPACK" pack c.pte --data c_other.ptd -o c_other.xpc)
[ "$st" = 3 ] && [ ! -e c_other.xpc ] || fail "pack of a program and a .ptd giving a content key other bytes: exit $st"
"$XPACK" pack c.pte --data c_other.ptd -o c_other.xpc 2> c.err > /dev/null || true
grep -q "c.pte: named_data key [0-9a-f]* holds .* bytes that differ from the .* bytes c_other.ptd holds" c.err ||
  fail "the refusal names neither both files nor the key: $(cat c.err)"

echo "PASS: a content key over two contents refused, also where a program holds the key twice or a .ptd holds it too; copies and shared layers packed"
