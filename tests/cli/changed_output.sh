#!/usr/bin/env bash
# Something that appears at the output while a command works (a FIFO, made by the LD_PRELOAD shim
# change_on_map.c at the command's first write) is refused at the rename as it would have been before the
# work: exit 2 naming what is there, the FIFO left as it is, no temporary file left. For pack, pack --zstd,
# inflate and export.
#   changed_output.sh XPACK GENMODEL SHIM
set -euo pipefail
XPACK=$1 GEN=$2 SHIM=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
"$GEN" llm -o m.pte --size 1M > /dev/null
"$XPACK" -q pack m.pte -o c.xpc && "$XPACK" -q pack m.pte -o z.xpc --zstd=1
mkdir out
for cmd in "pack m.pte -o out/o" "pack m.pte --zstd=1 -o out/o" "inflate z.xpc out/o" "export --executorch c.xpc out/o"; do
  rc=0
  # shellcheck disable=SC2086
  XPACK_TEST_MKFIFO_ON_WRITE=out/o LD_PRELOAD=$SHIM "$XPACK" -q $cmd > /dev/null 2> err.txt || rc=$?
  [ -p out/o ] || fail "$cmd: the FIFO that appeared at the output was replaced: $(ls -l out)"
  [ $rc = 2 ] && grep -q "out/o: the output is a FIFO" err.txt || fail "$cmd: exit $rc: $(cat err.txt)"
  [ "$(ls -A out)" = o ] || fail "$cmd: left $(ls -A out)"
  echo "$cmd with a FIFO appearing at the output: exit 2, $(cat err.txt)"
  rm out/o
done
# A file-size limit (ulimit -f) below the output's size: exit 4 naming the output, no file left, the old one kept
# (xpack once died of SIGXFSZ, exit 153, without a word).
echo old > out/o
for cmd in "pack m.pte -o out/o" "pack m.pte --zstd=1 -o out/o" "inflate z.xpc out/o" "export --executorch c.xpc out/o"; do
  rc=0
  # shellcheck disable=SC2086
  (ulimit -f 64 && exec "$XPACK" -q $cmd > /dev/null 2> err.txt) || rc=$?
  [ $rc = 4 ] && grep -q "out/o" err.txt || fail "$cmd past ulimit -f: exit $rc: $(cat err.txt)"
  [ "$(cat out/o)" = old ] && [ "$(ls -A out)" = o ] || fail "$cmd past ulimit -f: the output folder holds $(ls -A out)"
  echo "$cmd past ulimit -f: exit 4, $(head -c 200 err.txt)"
done
# The same limit on a report written to a file: exit 4, and the file as it was (empty with `>`, its old bytes
# with `>>`), not half a JSON document (found by a review).
for redirect in new append; do
  printf 'kept' > report.json
  rc=0
  if [ $redirect = new ]; then (ulimit -f 2 && exec "$XPACK" dump c.xpc --json > report.json 2> err.txt) || rc=$?
  else (ulimit -f 2 && exec "$XPACK" dump c.xpc --json >> report.json 2> err.txt) || rc=$?; fi
  want=$([ $redirect = new ] && echo "" || echo kept)
  [ $rc = 4 ] && [ "$(cat report.json)" = "$want" ] && grep -q "cannot write the report to stdout" err.txt ||
    fail "dump --json past ulimit -f ($redirect): exit $rc, report.json holds $(wc -c < report.json) bytes: $(cat err.txt)"
done
# ...but a report written over a file's old bytes (`1<>`, offset 0) must not cut the file: that would take bytes
# xpack never wrote (found by a review of the change above).
head -c 12000 /dev/zero | tr '\0' 'k' > report.json
rc=0; (ulimit -f 2 && exec "$XPACK" dump c.xpc --json 1<> report.json 2> err.txt) || rc=$?
[ $rc = 4 ] && [ "$(stat -c %s report.json)" = 12000 ] ||
  fail "dump --json over a file's bytes past ulimit -f: exit $rc, the file holds $(stat -c %s report.json) bytes of 12000"
echo "a report past ulimit -f: exit 4, the file as it was"
# verify --model re-packs into a scratch file in $TMPDIR: a TMPDIR that is no folder is named as such (it was
# called a file with a temporary file "beside it").
rc=0; TMPDIR="$PWD/no-such-folder" "$XPACK" verify c.xpc --model m.pte > /dev/null 2> err.txt || rc=$?
[ $rc = 4 ] && grep -q "a scratch file in $PWD/no-such-folder (\$TMPDIR): cannot create it in the folder" err.txt ||
  fail "verify --model with TMPDIR missing: exit $rc: $(cat err.txt)"
echo "verify --model with TMPDIR missing: exit 4, $(head -c 160 err.txt)"
