#!/usr/bin/env bash
# inflate refuses an output its file system has no room for, before it writes any of it: a 133 KB transport file
# whose frames declare 4 GiB was written whole into the output's file system before its region hash failed (a
# review); on a device short of space an install-time inflate filled the disk. The file system is made to report
# 64 KiB free (small_disk.so, preloaded); the real one is checked to have room for the same inflate.
#   no_room.sh XPACK GENMODEL SMALL_DISK_SO
set -euo pipefail
XPACK=$1; GEN=$2; SHIM=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
"$GEN" llm --size 1M -o m.pte > /dev/null
"$XPACK" -q pack m.pte --zstd -o m.z.xpc
set +e
# ASan (the sanitized stage) insists on being first among the preloaded libraries; the shim needs no checks.
LD_PRELOAD="$SHIM" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
  "$XPACK" inflate m.z.xpc out.xpc > out.txt 2> err.txt
st=$?
set -e
[ "$st" = 4 ] || fail "inflate into a file system with 64 KiB free: exit $st, expected 4: $(cat err.txt)"
grep -q "out.xpc: needs [0-9]* bytes, and its file system has 65536 free; nothing was written" err.txt ||
  fail "the refusal does not name the output, the bytes needed and the room: $(cat err.txt)"
[ ! -e out.xpc ] && [ -z "$(ls -A . | grep -v '^m\.\|^out\.txt$\|^err\.txt$')" ] || fail "something was left: $(ls -A)"
"$XPACK" -q inflate m.z.xpc out.xpc || fail "inflate with the real file system's room"
"$XPACK" -q verify out.xpc > /dev/null || fail "verify of the inflated file"
echo "PASS: inflate refuses an output its file system has no room for, naming the bytes; with room it inflates"
