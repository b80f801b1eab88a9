#!/usr/bin/env bash
# An input truncated while `xpack pack` reads it (and a cache truncated while `xpack export` writes from it):
# the mapped program's pages past its new end raise SIGBUS
# when packing touches them. Expected: exit 3, a message naming the file and the offset, no output file and
# no temporary file left, stdout empty. The truncation is made by the LD_PRELOAD shim change_on_map.c
# the moment pack maps the program, so it comes before packing reads the weights on every machine (a poll
# from this script once lost that race: pack reads a 192 MiB program in 0.2 s). Real processes, a generated
# program; no file of ../shared is touched.
#   truncated_input.sh XPACK GENMODEL SHIM
set -euo pipefail
XPACK=$1 GEN=$2 SHIM=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
mkdir out
"$GEN" llm -o m.pte --size 8M > /dev/null

set +e
XPACK_TEST_TRUNCATE_ON_MAP=m.pte LD_PRELOAD=$SHIM "$XPACK" pack m.pte -o out/c.xpc --jobs 2 > stdout.txt 2> stderr.txt
rc=$?
set -e
[ "$(stat -c %s m.pte)" = 65536 ] || fail "the shim did not truncate the program: $(stat -c %s m.pte) bytes"
[ "$rc" = 3 ] || fail "pack exited $rc, expected 3: $(cat stderr.txt)"
grep -q "m.pte: changed while xpack read it: the read at offset [0-9]* is past its end now" stderr.txt ||
  fail "the message does not name the file and the offset: $(cat stderr.txt)"
[ ! -s stdout.txt ] || fail "stdout is not empty: $(cat stdout.txt)"
[ -z "$(ls -A out)" ] || fail "pack left files behind: $(ls -A out)"
echo "pack of a program truncated under it: exit 3, $(cat stderr.txt)"

# export writes region bytes straight from the cache's mapping: a cache truncated after export checked it
# makes those writes fail (EFAULT, no SIGBUS), and the message names the cache, not the output.
"$GEN" llm -o m2.pte --size 8M > /dev/null && "$XPACK" pack m2.pte -o c.xpc -q
set +e
XPACK_TEST_TRUNCATE_ON_WRITE=c.xpc LD_PRELOAD=$SHIM "$XPACK" export --executorch c.xpc out/c.xpwc > stdout.txt 2> stderr.txt
rc=$?
set -e
[ "$(stat -c %s c.xpc)" = 65536 ] || fail "the shim did not truncate the cache: $(stat -c %s c.xpc) bytes"
[ "$rc" = 3 ] || fail "export exited $rc, expected 3: $(cat stderr.txt)"
grep -q "c.xpc: changed while xpack read it: the [0-9]* bytes at offset [0-9]* reach past its end now" stderr.txt ||
  fail "the message does not name the cache and the offset: $(cat stderr.txt)"
[ ! -s stdout.txt ] || fail "stdout is not empty: $(cat stdout.txt)"
[ -z "$(ls -A out)" ] || fail "export left files behind: $(ls -A out)"
echo "export of a cache truncated under it: exit 3, $(cat stderr.txt)"
