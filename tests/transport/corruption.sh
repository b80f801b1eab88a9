#!/usr/bin/env bash
# Damaged transport files: inflate_flip flips every byte of the header, metadata and footer and every
# FRAME_STEP-th frame byte and truncates the file; then, through the CLI: a damaged frame, a frame whose
# header declares another content size, and a truncated file each make inflate exit 3 naming the file (and
# the region and its offset), leave no output and no temporary file, and make verify exit 1 naming the region.
XPACK=$1; GEN=$2; FLIPPER=$3
. "$(dirname "$0")/../model/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
"$GEN" llm-q4 -o m.pte --size 32K > /dev/null
"$XPACK" pack m.pte -o plain.xpc > /dev/null
"$XPACK" pack m.pte -o z.xpc --zstd > /dev/null
# Thousands of inflates, a few of which succeed and fsync: on tmpfs when there is one, fsync costs nothing.
work=$(mktemp -d -p /dev/shm 2> /dev/null || mktemp -d -p "$d")
trap 'rm -rf "$d" "$work"' EXIT
"$FLIPPER" z.xpc plain.xpc "$work" 7 || fail "inflate_flip"

"$XPACK" dump --json z.xpc > dump.json
# Each region: a byte in the middle of its frame, and its Frame_Content_Size plus one.
python3 - <<'PY'
import json
d = json.load(open("dump.json"))
with open("regions.txt", "w") as out:
    for i, r in enumerate(d["regions"]):
        out.write(f"{i} {r['offset']} {r['stored_size']} {r['size']}\n")
PY
bad_frame() { # $1 = description, $2 = region index; the damaged file is bad.xpc
  rm -f out.xpc
  set +e; "$XPACK" inflate bad.xpc out.xpc 2> err.txt; st=$?; set -e
  [ "$st" = 3 ] || fail "$1: inflate exit $st"
  grep -q "bad.xpc: region $2 at offset" err.txt || fail "$1: message does not name region $2: $(cat err.txt)"
  [ ! -e out.xpc ] || fail "$1: output written"
  [ -z "$(ls -A | grep '^\.')" ] || fail "$1: temporary file left: $(ls -A | grep '^\.')"
  set +e; "$XPACK" verify bad.xpc > v.txt; st=$?; set -e
  [ "$st" = 1 ] || fail "$1: verify exit $st"
  grep -q "^region $2 at offset" v.txt || fail "$1: verify does not name region $2: $(cat v.txt)"
}
n=0
while read -r idx off stored size; do
  cp z.xpc bad.xpc
  python3 - "$off" "$stored" <<'PY'
import sys
off, stored = int(sys.argv[1]), int(sys.argv[2])
b = bytearray(open("bad.xpc", "rb").read())
b[off + stored // 2] ^= 0x80
open("bad.xpc", "wb").write(b)
PY
  bad_frame "region $idx: frame byte flipped" "$idx"
  cp z.xpc bad.xpc
  python3 - "$off" "$size" <<'PY'
import sys
off, size = int(sys.argv[1]), int(sys.argv[2])
b = bytearray(open("bad.xpc", "rb").read())
fhd = b[off + 4]                      # Frame_Header_Descriptor (RFC 8878 3.1.1.1.1)
single = (fhd >> 5) & 1
fcs_flag = fhd >> 6
at = off + 5 + (0 if single else 1) + [0, 1, 2, 4][fhd & 3]
width = [1 if single else 0, 2, 4, 8][fcs_flag]
assert width > 0, "frame without a content size"
bias = 256 if width == 2 else 0
value = int.from_bytes(b[at:at + width], "little") + bias
assert value == size, (value, size)
b[at:at + width] = (value + 1 - bias).to_bytes(width, "little")
open("bad.xpc", "wb").write(b)
PY
  bad_frame "region $idx: content size + 1" "$idx"
  grep -q "declares $((size + 1)) bytes of content, the region record says $size" err.txt ||
    fail "region $idx: content size message: $(cat err.txt)"
  n=$((n + 1))
done < regions.txt
# Truncated inside the data area: the footer is gone, exit 3, no output.
size=$(stat -c %s z.xpc)
for len in 100 $((size / 2)) $((size - 1)); do
  head -c $len z.xpc > bad.xpc
  rm -f out.xpc
  set +e; "$XPACK" inflate bad.xpc out.xpc 2> err.txt; st=$?; set -e
  [ "$st" = 3 ] || fail "truncated to $len: exit $st"
  grep -q "bad.xpc" err.txt || fail "truncated to $len: $(cat err.txt)"
  [ ! -e out.xpc ] && [ -z "$(ls -A | grep '^\.')" ] || fail "truncated to $len: output or temporary file left"
done
# A failed inflate leaves an existing output as it was.
echo previous > out.xpc
"$XPACK" inflate bad.xpc out.xpc 2> /dev/null && fail "truncated file inflated"
[ "$(cat out.xpc)" = previous ] || fail "a failed inflate replaced the existing output"
echo "transport corruption: $n regions damaged twice each, all refused naming the region; truncations refused"
