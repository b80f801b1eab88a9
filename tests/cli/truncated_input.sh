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

# truncated WHEN FILE MESSAGE COMMAND...: COMMAND, with the shim truncating FILE at WHEN (MAP or WRITE), exits 3
# with MESSAGE (a grep pattern) on stderr, nothing on stdout and nothing in out/.
truncated() {
  local when=$1 file=$2 message=$3 rc=0; shift 3
  local what="$2 ${3:-}" # the xpack command, e.g. "pack m.pte"
  env "XPACK_TEST_TRUNCATE_ON_$when=$file" LD_PRELOAD="$SHIM" "$@" > stdout.txt 2> stderr.txt || rc=$?
  [ "$(stat -c %s "$file")" = 65536 ] || fail "$what: the shim did not truncate $file: $(stat -c %s "$file") bytes"
  [ "$rc" = 3 ] || fail "$what: exited $rc, expected 3: $(cat stderr.txt)"
  grep -q "$message" stderr.txt || fail "$what: the message does not name the file and the offset: $(cat stderr.txt)"
  [ ! -s stdout.txt ] || fail "$what: stdout is not empty: $(cat stdout.txt)"
  [ -z "$(ls -A out)" ] || fail "$what: files were left behind: $(ls -A out)"
  echo "$file truncated under $what: exit 3, $(cat stderr.txt)"
}
truncated MAP m.pte "m.pte: changed while xpack read it: the read at offset [0-9]* is past its end now" \
  "$XPACK" pack m.pte -o out/c.xpc --jobs 2

# export writes region bytes straight from the cache's mapping: a cache truncated after export checked it
# makes those writes fail (EFAULT, no SIGBUS), and the message names the cache, not the output.
"$GEN" llm -o m2.pte --size 8M > /dev/null && "$XPACK" pack m2.pte -o c.xpc -q
truncated WRITE c.xpc "c.xpc: changed while xpack read it: the [0-9]* bytes at offset [0-9]* reach past its end now" \
  "$XPACK" export --executorch c.xpc out/c.xpwc
