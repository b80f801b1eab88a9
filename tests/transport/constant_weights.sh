#!/usr/bin/env bash
# Weights of one value (a zero- or constant-initialised export) compress past what a reader accepts of a transport
# file: its regions may declare at most 1024 times the file's size once they hold more than 64 MiB (FORMAT.md
# 9.2), and zstd stores 128 KiB of one value in a 4-byte RLE block. `pack --zstd` once wrote such a file, exit 0,
# that its own verify, dump and inflate refused as crafted (found by a review). Now a region is stored in raw
# blocks where the frames before it would expand too far: an 80 MiB program of nearly constant weights packs
# into a transport file that verify calls sound and inflate turns into the plain pack, byte for byte, with one
# thread and with several, and that is still far smaller than its regions.
XPACK=$1; GENMODEL=$2
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
"$GENMODEL" llm -o "$d/m.pte" --ptd "$d/m.ptd" --size 80M --name-keys > /dev/null
# The .ptd's segment bytes (FlatTensor header: segment base and size at 0x20) zeroed, one distinct float per 64 KiB.
python3 - "$d/m.ptd" "$d/constant.ptd" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
base, size = struct.unpack_from("<QQ", data, 0x20)
assert 0 < base and base + size <= len(data), (base, size, len(data))
data[base:base + size] = bytes(size)
for i, at in enumerate(range(base, base + size, 65536)):
    struct.pack_into("<f", data, at, float(i + 1))
open(sys.argv[2], "wb").write(data)
PY
"$XPACK" -q pack "$d/m.pte" --data "$d/constant.ptd" -o "$d/plain.xpc"
for jobs in 1 2; do
  "$XPACK" -q pack "$d/m.pte" --data "$d/constant.ptd" --zstd=3 --jobs $jobs -o "$d/t$jobs.xpc"
  "$XPACK" verify "$d/t$jobs.xpc" > "$d/verify.out" 2>&1 || fail "--jobs $jobs: verify: $(head -c 400 "$d/verify.out")"
  "$XPACK" inflate "$d/t$jobs.xpc" "$d/i$jobs.xpc" > /dev/null 2>&1 || fail "--jobs $jobs: inflate refused the file"
  cmp -s "$d/i$jobs.xpc" "$d/plain.xpc" || fail "--jobs $jobs: inflated file differs from the plain pack"
  regions=$("$XPACK" dump --json "$d/plain.xpc" | python3 -c 'import json, sys; print(sum(r["size"] for r in json.load(sys.stdin)["regions"]))')
  size=$(stat -c %s "$d/t$jobs.xpc")
  [ "$regions" -gt $((64 << 20)) ] || fail "the program's regions hold $regions bytes, not past the 64 MiB floor"
  [ $((size * 1024)) -ge "$regions" ] || fail "--jobs $jobs: $size bytes declare $regions bytes of regions"
  [ $((size * 10)) -lt "$regions" ] || fail "--jobs $jobs: the transport file ($size bytes) is not compressed"
  echo "constant_weights: --jobs $jobs: $regions bytes of regions in a $size-byte transport file; sound, inflates to the plain pack"
done
