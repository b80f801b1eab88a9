#!/usr/bin/env bash
# What the machine lacks is not what the cache lacks (found by a review, 2026-11-29):
# - `verify --model` with too few file descriptors reported the cache unsound ("the cache differs from what this
#   machine packs", exit 1); it now stops with exit 4, nothing on stdout, naming what failed.
# - under a umask without the owner's read bit, xpack could not read back its own unnamed files through
#   /proc/self/fd (`pack --zstd` exit 4, `verify --model` exit 1) nor its bench folder and cache (`bench` exit 3).
#   Run as nobody where that is possible (root ignores file modes); skipped otherwise, with a note.
XPACK=$1; GENMODEL=$2
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
chmod 755 "$d"
"$GENMODEL" conv -o "$d/conv.pte" > /dev/null
"$XPACK" pack "$d/conv.pte" -o "$d/conv.xpc" -q

# Descriptors 0 to 2 and one more (those the test inherits closed first): enough to open the cache and the
# programs, not to read back the re-pack.
set +e
bash -c 'for f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done; ulimit -n 4 && exec "$@"' \
  _ "$XPACK" verify "$d/conv.xpc" --model "$d/conv.pte" > "$d/out" 2> "$d/err"
st=$?
set -e
echo "  ulimit -n 4: exit $st: $(head -c 200 "$d/err")"
[ "$st" = 4 ] || fail "verify --model without descriptors: exit $st, expected 4"
[ ! -s "$d/out" ] || fail "verify --model without descriptors printed a report: $(head -c 200 "$d/out")"
grep -q "Too many open files" "$d/err" || fail "the message does not name the descriptors"
! grep -q "differs" "$d/err" || fail "the cache was called different"

if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null ||
   ! setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$XPACK" 2> /dev/null; then
  echo "PASS (umask part skipped: needs root, setpriv and an xpack that the user nobody may run)"
  exit 0
fi
chmod 777 "$d"
as_nobody() { (cd "$d" && setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c 'umask 0477; exec "$@"' _ "$@"); }
as_nobody "$XPACK" pack conv.pte -o z.xpc --zstd -q || fail "pack --zstd under umask 0477"
as_nobody "$XPACK" verify conv.xpc --model conv.pte > /dev/null || fail "verify --model under umask 0477"
TMPDIR=$d as_nobody "$XPACK" bench conv.pte --reps 1 --variants nocache,cache_warm -q > /dev/null ||
  fail "bench under umask 0477"
echo "PASS: verify --model stops on the machine's limits (exit 4); umask 0477 leaves xpack its own files"
