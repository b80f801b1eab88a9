#!/usr/bin/env bash
# Many region records describing one place (issue 16): verify reads every region's bytes (hashes them, or in
# the transport form decodes its frame), so N records over one region asked it to read that region N times.
# 10,000 records over one 1 MiB region (a 1.3 MB cache) took 0.6 s; over one zstd frame declaring 1 GiB (a
# 345 KB transport file) over 60 s, decoding 10 TiB (now refused at open for what it declares). verify must report
# the overlaps, read each place once, and finish in well under a second; inflate refuses such a file at its first
# overlap.
XPACK=$1; CRAFT=$2
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
bound_address_space $((1024 * 1024)) # KiB: 1 GiB

# name | file: verify must exit 1, in time, naming the overlap of region 1
expect_overlaps() {
  local name=$1 file=$2
  set +e; timeout 20 "$XPACK" verify "$file" > "$d/$name.out" 2> "$d/$name.err"; local st=$?; set -e
  [ "$st" = 1 ] || fail "$name: verify exit $st, expected 1 (124: it read the one region once per record)"
  grep -q "region 1 at offset [0-9]*: overlaps the previous region" "$d/$name.out" ||
    fail "$name: verify does not report region 1's overlap: $(head -c 300 "$d/$name.out")"
  echo "overlapping_regions: $name: $(stat -c %s "$file") bytes, verify exit 1, $(grep -c overlaps "$d/$name.out") overlaps"
}

"$CRAFT" "$d/one-place.xpc" same-region 20000 16777216
expect_overlaps mappable "$d/one-place.xpc"
# 2,000 records over one frame declaring 1 GiB declare 2 TiB, which open now refuses before anything is decoded
# (FORMAT.md 9.2: at most 1024 times the file's size); the overlaps are checked over a frame of 32 KiB.
"$CRAFT" "$d/bomb.xpc.zst" same-region 2000 1073741824 zstd
set +e; timeout 20 "$XPACK" verify "$d/bomb.xpc.zst" > "$d/bomb.out" 2>&1; st=$?; set -e
[ "$st" = 1 ] && grep -q "past the limit of" "$d/bomb.out" || fail "transport, 2 TiB declared: exit $st: $(head -c 300 "$d/bomb.out")"
"$CRAFT" "$d/one-frame.xpc.zst" same-region 2000 32768 zstd
expect_overlaps transport "$d/one-frame.xpc.zst"
set +e; timeout 20 "$XPACK" inflate "$d/one-frame.xpc.zst" "$d/out.xpc" > /dev/null 2> "$d/inflate.err"; st=$?; set -e
[ "$st" = 3 ] && grep -q "one-frame.xpc.zst: region 1 at offset 64: overlaps" "$d/inflate.err" ||
  fail "inflate: exit $st: $(head -c 300 "$d/inflate.err")"
[ ! -e "$d/out.xpc" ] || fail "inflate wrote its output"

# Regions that do not overlap are still read, each once: sound files stay sound, a damaged one is named.
"$CRAFT" "$d/three.xpc" zero-regions 3 16384
"$CRAFT" "$d/three.xpc.zst" zero-regions 3 16777216 zstd
timeout 20 "$XPACK" verify "$d/three.xpc" > /dev/null || fail "verify: three regions, mappable: not sound"
timeout 20 "$XPACK" verify "$d/three.xpc.zst" > /dev/null || fail "verify: three regions, transport: not sound"
echo "overlapping_regions: OK"
