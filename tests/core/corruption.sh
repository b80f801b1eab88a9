#!/usr/bin/env bash
# Damage a cache on purpose: every byte of header, metadata and footer, a byte of every region, truncation,
# wrong magic and major version. verify must say so, the loader must refuse or still give the right outputs,
# and nothing may crash.
XPACK=$1; SUB=$2
FLIP=$(dirname "$SUB")/flipbyte
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT

"$SUB" pack "$d/good.xpc" > /dev/null
"$SUB" run > "$d/nocache.txt"
size=$(stat -c %s "$d/good.xpc")
meta=$("$XPACK" dump --json "$d/good.xpc" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["offset"])')

crashes=0; undetected=0; wrong=0; refused=0; served=0
check_copy() { # $1 = description; the damaged file is $d/bad.xpc
  local st
  st=$(status_of "$XPACK" verify "$d/bad.xpc")
  [ "$st" -ge 128 ] && { echo "CRASH verify: $1"; crashes=$((crashes+1)); }
  [ "$st" = 1 ] || { echo "UNDETECTED by verify (exit $st): $1"; undetected=$((undetected+1)); }
  st=$(status_of "$XPACK" dump "$d/bad.xpc")
  [ "$st" -ge 128 ] && { echo "CRASH dump: $1"; crashes=$((crashes+1)); }
  set +e; "$SUB" run --cache "$d/bad.xpc" > "$d/run.txt" 2> "$d/run.err"; st=$?; set -e
  if [ "$st" -ge 128 ]; then echo "CRASH run: $1"; crashes=$((crashes+1))
  elif [ "$st" = 3 ]; then refused=$((refused+1))
  elif ! diff -q <(outputs "$d/nocache.txt") <(outputs "$d/run.txt") > /dev/null; then
    echo "WRONG OUTPUT: $1"; wrong=$((wrong+1))
  else served=$((served+1)); fi
}

# Every byte of the header (64), the metadata area and the footer.
for off in $(seq 0 63) $(seq "$meta" $((size - 1))); do
  cp "$d/good.xpc" "$d/bad.xpc"; "$FLIP" "$d/bad.xpc" "$off" 0x10
  check_copy "byte $off flipped"
done
# One byte in the middle of every region: verify must name the region.
python3 -c 'import json,sys; [print(i, r["offset"] + r["size"]//2) for i, r in enumerate(json.load(sys.stdin)["regions"])]' \
  < <("$XPACK" dump --json "$d/good.xpc") > "$d/regions.txt"
while read -r idx off; do
  cp "$d/good.xpc" "$d/bad.xpc"; "$FLIP" "$d/bad.xpc" "$off" 0x80
  "$XPACK" verify "$d/bad.xpc" > "$d/v.txt" && fail "region $idx flip not detected"
  grep -q "^region $idx at offset" "$d/v.txt" || fail "verify does not name region $idx: $(cat "$d/v.txt")"
done < "$d/regions.txt"
# Truncation at many points.
for len in 0 1 7 8 63 64 100 4096 $((size / 2)) $((meta)) $((size - 81)) $((size - 80)) $((size - 1)); do
  head -c "$len" "$d/good.xpc" > "$d/bad.xpc"
  check_copy "truncated to $len"
done
# Wrong magic, wrong major version.
cp "$d/good.xpc" "$d/bad.xpc"; "$FLIP" "$d/bad.xpc" 1 0x20
"$XPACK" dump "$d/bad.xpc" 2> "$d/err.txt" && fail "dump accepted a wrong magic"
grep -q "header magic" "$d/err.txt" || fail "wrong magic message: $(cat "$d/err.txt")"
cp "$d/good.xpc" "$d/bad.xpc"; "$FLIP" "$d/bad.xpc" $((size - 80 + 56)) 0x03  # footer major 1 -> 2
set +e; "$XPACK" dump "$d/bad.xpc" 2> "$d/err.txt"; st=$?; set -e
[ "$st" = 3 ] || fail "dump of major 2: exit $st"
grep -q "format version 2.0, this xpack reads major version 1 only" "$d/err.txt" || fail "major message: $(cat "$d/err.txt")"
echo "not an xpack file at all" > "$d/bad.xpc"
("$XPACK" verify "$d/bad.xpc" || true) | grep -q "not an xpack cache" || fail "plain text not reported"

echo "corruption: crashes=$crashes undetected=$undetected wrong_outputs=$wrong refused_at_open=$refused served_correctly=$served"
[ "$crashes" = 0 ] && [ "$undetected" = 0 ] && [ "$wrong" = 0 ] || fail "corruption matrix"
echo "corruption: ok"
