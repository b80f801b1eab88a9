#!/usr/bin/env bash
# A pack that fails for an ordinary reason exits non-zero with a message, leaves no temporary file (nor any
# other new file) and leaves the previous target byte for byte as it was: bad inputs (missing, truncated
# or not a program), writes that fail (file size limit; a full file system when user namespaces allow a
# private tmpfs), a directory that cannot be written, a target that is a directory, a missing directory.
#   pack_failures.sh XPACK XPACK-GENMODEL
XPACK=$1; GEN=$2
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

"$GEN" llm -o m.pte --ptd m.ptd --size 1M > /dev/null
"$GEN" llm -o other.pte --size 1M --seed 2 > /dev/null
"$XPACK" pack other.pte -o previous.xpc > /dev/null
"$XPACK" pack m.pte --data m.ptd -o complete.xpc > /dev/null
complete_size=$(stat -c %s complete.xpc)
mkdir out
cases=0

# expect_failure DIR TARGET EXIT DESCRIPTION -- COMMAND...: COMMAND fails with EXIT and a message on stderr;
# DIR lists exactly the files it listed before; TARGET is unchanged.
expect_failure() {
  local dir=$1 target=$2 want=$3 desc=$4; shift 5
  local before st
  before=$(ls -A "$dir" | sort)
  [ -e "$target" ] && cp -a "$target" "$d/target.before" || rm -rf "$d/target.before"
  set +e; "$@" > "$d/out.txt" 2> "$d/err.txt"; st=$?; set -e
  [ "$st" = "$want" ] || fail "$desc: exit $st, expected $want: $(cat "$d/err.txt")"
  [ -s "$d/err.txt" ] || fail "$desc: no message"
  [ "$(ls -A "$dir" | sort)" = "$before" ] || fail "$desc: files left behind: $(ls -A "$dir")"
  if [ -e "$d/target.before" ]; then
    if [ -d "$target" ]; then diff -r "$d/target.before" "$target" > /dev/null || fail "$desc: the target directory changed"
    else cmp -s "$d/target.before" "$target" || fail "$desc: the previous target changed"; fi
    rm -rf "$d/target.before"
  fi
  cases=$((cases + 1))
  echo "  $desc: exit $st, $(head -n1 "$d/err.txt")"
}

cp previous.xpc out/m.xpc
# Bad inputs, including one found only after the temporary file exists (the named data is missing).
expect_failure out out/m.xpc 3 "program without its .ptd" -- "$XPACK" pack m.pte -o out/m.xpc
head -c $(( $(stat -c %s m.ptd) / 2 )) m.ptd > half.ptd
expect_failure out out/m.xpc 3 "truncated .ptd" -- "$XPACK" pack m.pte --data half.ptd -o out/m.xpc
for len in 100 $(( $(stat -c %s m.pte) / 2 )) $(( $(stat -c %s m.pte) - 1 )); do
  head -c "$len" m.pte > short.pte
  expect_failure out out/m.xpc 3 ".pte truncated to $len bytes" -- "$XPACK" pack short.pte --data m.ptd -o out/m.xpc
done
echo "not a program" > text.pte
expect_failure out out/m.xpc 3 "text named .pte" -- "$XPACK" pack text.pte -o out/m.xpc
# A weight's key with a zero byte inside, in the program and the .ptd alike: ExecuTorch reads keys as C strings,
# so "w\0a" and "w\0b" would be one weight to it and two to the cache.
python3 - <<'PY' || fail "could not put a zero byte into a key"
import re
pte, ptd = open("m.pte", "rb").read(), open("m.ptd", "rb").read()
key = re.search(rb"[0-9a-f]{64}", ptd).group(0)
assert key in pte, "the .ptd's first key is not in the program"
zero = key[:10] + b"\0" + key[11:]
open("zero_key.pte", "wb").write(pte.replace(key, zero))
open("zero_key.ptd", "wb").write(ptd.replace(key, zero))
PY
expect_failure out out/m.xpc 3 "a key holding a zero byte" -- "$XPACK" pack zero_key.pte --data zero_key.ptd -o out/m.xpc
grep -q "holds a zero byte at position 10" "$d/err.txt" || fail "zero byte in a key: the message does not say so"

# Writes that fail: a file size limit (SIGXFSZ ignored, so write returns EFBIG) before the first region,
# in the middle of the regions, and at the metadata (the last bytes written).
for kb in 1 $(( complete_size / 2048 )) $(( complete_size / 1024 )); do
  expect_failure out out/m.xpc 4 "file size limit $kb KiB" -- \
    bash -c 'trap "" XFSZ; ulimit -f '"$kb"'; exec "$@"' _ "$XPACK" pack m.pte --data m.ptd -o out/m.xpc
  grep -q "File too large" "$d/err.txt" || fail "size limit $kb KiB: the message does not say why: $(cat "$d/err.txt")"
done

# A full file system: a private tmpfs in a user and mount namespace, when this machine allows one.
if unshare -Urm true 2> /dev/null; then
  mkdir small
  set +e
  unshare -Urm bash -c '
    set -e
    mount -t tmpfs -o size=$(( '"$(stat -c %s previous.xpc) + complete_size / 2"' )) xpack-full "$1"
    cp previous.xpc "$1/m.xpc"   # leaves room for about half of the new file
    before=$(ls -A "$1" | sort)
    "$2" pack m.pte --data m.ptd -o "$1/m.xpc" 2> err.txt && exit 10
    grep -q "No space left on device" err.txt || exit 11
    [ "$(ls -A "$1" | sort)" = "$before" ] || exit 12
    cmp -s previous.xpc "$1/m.xpc" || exit 13
  ' _ "$d/small" "$XPACK"
  st=$?
  set -e
  [ "$st" = 0 ] || fail "full file system: check $st failed: $(cat err.txt 2> /dev/null)"
  cases=$((cases + 1))
  echo "  full file system: exit 4, $(head -n1 err.txt)"
else
  echo "  full file system: not tested (no unprivileged user namespaces here)"
fi

# A directory this user cannot write (as an unprivileged user when running as root, who could).
mkdir locked
cp previous.xpc locked/m.xpc
chmod 555 locked
as_user=()
if [ "$(id -u)" = 0 ]; then
  if command -v setpriv > /dev/null; then as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups); fi
fi
if [ "$(id -u)" != 0 ] || [ ${#as_user[@]} -gt 0 ]; then
  chmod 755 "$d"; chmod 644 m.pte m.ptd
  expect_failure locked locked/m.xpc 4 "directory not writable" -- "${as_user[@]}" "$XPACK" pack m.pte --data m.ptd -o locked/m.xpc
else
  echo "  directory not writable: not tested (root without setpriv)"
fi
chmod 755 locked

# The target is a directory, or in one that does not exist: refused before anything is written (usage
# errors, see tests/model/outputs.sh).
mkdir -p out/adir/inside
expect_failure out out/adir 2 "target is a directory" -- "$XPACK" pack m.pte --data m.ptd -o out/adir
expect_failure out out/missing 2 "directory does not exist" -- "$XPACK" pack m.pte --data m.ptd -o out/missing/m.xpc

# And the same pack with nothing in its way works, leaving only its output.
"$XPACK" pack m.pte --data m.ptd -o out/m.xpc > /dev/null
cmp -s out/m.xpc complete.xpc || fail "the pack after the failures differs"
[ "$(ls -A out | sort | tr '\n' ' ')" = "adir m.xpc " ] || fail "unexpected files: $(ls -A out)"
echo "pack_failures: $cases failure cases, each without a temporary file and with the previous target intact"
echo "pack_failures: ok"
