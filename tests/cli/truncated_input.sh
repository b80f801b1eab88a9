#!/usr/bin/env bash
# An input truncated while `xpack pack` reads it: the mapped program's pages past its new end raise SIGBUS
# when packing touches them. Expected: exit 3, a message naming the file and the offset, no output file and
# no temporary file left, stdout empty. The truncation happens as soon as the program shows in the
# process's mappings, long before packing reaches the weights at its end (a program of 192 MiB: packing it
# takes far longer than the poll). Real processes, a generated program; no file of ../shared is touched.
#   truncated_input.sh XPACK GENMODEL
set -euo pipefail
XPACK=$1 GEN=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
mkdir out
"$GEN" llm -o m.pte --size 192M > /dev/null

"$XPACK" pack m.pte -o out/c.xpc --jobs 2 > stdout.txt 2> stderr.txt &
pid=$!
mapped=0
for _ in $(seq 1 20000); do
  if grep -q "/m.pte" "/proc/$pid/maps" 2>/dev/null; then mapped=1; break; fi
  kill -0 "$pid" 2>/dev/null || break
done
[ "$mapped" = 1 ] || { wait "$pid" || true; fail "the program never showed in pack's mappings: $(cat stderr.txt)"; }
truncate -s 65536 m.pte
set +e; wait "$pid"; rc=$?; set -e
[ "$rc" = 3 ] || fail "pack exited $rc, expected 3: $(cat stderr.txt)"
grep -q "m.pte: changed while xpack read it: the read at offset [0-9]* is past its end now" stderr.txt ||
  fail "the message does not name the file and the offset: $(cat stderr.txt)"
[ ! -s stdout.txt ] || fail "stdout is not empty: $(cat stdout.txt)"
[ -z "$(ls -A out)" ] || fail "pack left files behind: $(ls -A out)"
echo "pack of a program truncated under it: exit 3, $(cat stderr.txt)"
