#!/usr/bin/env bash
# One content key, one content, across the programs packed into one cache. A named key of 64 hex digits is
# trusted as the SHA-256 of its bytes (docs/TRUST.md); two programs whose named_data give one such key
# different bytes were packed into one cache with the first program's weight under the key, and the second then
# ran with it: other outputs, exit 0 (found by a review). `pack` must refuse the pair (exit 3, naming both
# files and the key, writing nothing); a copy of a program with the same bytes under the same keys still packs
# with it, and so do two programs sharing every layer's keys over the same bytes (llm --variant B).
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
echo "PASS: a content key over two contents refused; copies and shared layers packed"
