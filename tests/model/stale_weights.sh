#!/usr/bin/env bash
# A weight changed in place under a key that names its old content (ExecuTorch's 64-hex-digit named keys, trusted
# as the SHA-256 of their bytes: docs/TRUST.md) keeps its key, and the cache serves its old packing: no identity
# can tell, short of reading every raw weight. What the tools say of it must not be the opposite (a review,
# 2026-11-29):
# - `verify --model` finds it (exit 1) and names the input the cache was packed from that differs from the one
#   given (PROV's size and XXH3), where it blamed this machine's XNNPACK alone;
# - `run -v` says the cache was built from a program of this graph, weights not compared, where it said "built
#   from this program".
XPACK=$1; GENMODEL=$2
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
"$GENMODEL" llm --size 256K -o "$d/m.pte" > /dev/null
"$XPACK" pack "$d/m.pte" -o "$d/m.xpc" > /dev/null
# Every 16th byte of the program's last half (its segments: the weights) changed; keys and size stay.
python3 - "$d/m.pte" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
for i in range(len(data) // 2, len(data), 16):
    data[i] ^= 0x01
open(sys.argv[1], "wb").write(data)
PY
set +e; "$XPACK" verify "$d/m.xpc" --model "$d/m.pte" > "$d/verify.out" 2>&1; st=$?; set -e
[ "$st" = 1 ] || fail "verify --model of a cache whose weights changed since: exit $st: $(head -c 400 "$d/verify.out")"
grep -Eq "^.*m\.xpc: packed from another m\.pte \([0-9]+ bytes, xxh3 [0-9a-f]{16}; the one given has [0-9]+ bytes" \
  "$d/verify.out" || fail "verify --model does not name the changed input: $(grep -v 'entry seed' "$d/verify.out" | head -c 600)"
echo "stale_weights: verify --model: $(grep -m1 'packed from another' "$d/verify.out" | cut -c1-160)"
"$XPACK" run "$d/m.pte" --cache "$d/m.xpc" -v > /dev/null 2> "$d/run.err"
grep -q "built from this program" "$d/run.err" && fail "run -v says the cache was built from this program"
grep -q "the cache was built from a program of this graph" "$d/run.err" || fail "run -v: $(head -c 400 "$d/run.err")"
echo "stale_weights: run -v: $(grep -m1 'of this graph' "$d/run.err" | cut -c1-120)"
