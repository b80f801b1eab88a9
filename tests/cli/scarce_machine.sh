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
chmod 644 "$d/conv.pte" "$d/conv.xpc" # readable by nobody below, whatever umask the test runs under

# From 4 descriptors up (those the test inherits closed first), until one run has enough: each run either gives the
# whole report or stops with exit 4 and nothing on stdout; it never calls the cache unsound. Whatever cannot start
# at all with so few (a sanitizer's runtime, the dynamic loader) is passed over; at least one run must reach the
# re-pack and stop there.
stopped=0
for n in 4 5 6 7 8 9 10 11 12 16 24 32; do
  set +e
  bash -c 'for f in /proc/$$/fd/*; do k=${f##*/}; [ "$k" -gt 2 ] && eval "exec $k>&-"; done; ulimit -n "$0" && exec "$@"' \
    "$n" "$XPACK" verify "$d/conv.xpc" --model "$d/conv.pte" > "$d/out" 2> "$d/err"
  st=$?
  set -e
  ! grep -q "differs\|problem" "$d/out" "$d/err" || fail "ulimit -n $n: the cache was called unsound: $(head -c 300 "$d/out" "$d/err")"
  if [ "$st" = 0 ]; then
    grep -q "sound" "$d/out" || fail "ulimit -n $n: exit 0 without the report"
    break
  fi
  if [ "$st" = 4 ] && grep -q "Too many open files" "$d/err"; then
    [ ! -s "$d/out" ] || fail "ulimit -n $n: exit 4 with a report on stdout: $(head -c 200 "$d/out")"
    echo "  ulimit -n $n: exit 4: $(head -c 160 "$d/err")"
    stopped=1
  fi
done
[ "$stopped" = 1 ] || fail "no descriptor limit made verify --model stop on descriptors (last: exit $st, $(head -c 200 "$d/err"))"

if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null ||
   ! setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$XPACK" 2> /dev/null; then
  echo "SKIP (the descriptor part passed; the umask part needs root, setpriv and an xpack the user nobody may run)"
  exit 77
fi
chmod 777 "$d"
as_nobody() { (cd "$d" && setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c 'umask 0477; exec "$@"' _ "$@"); }
as_nobody "$XPACK" pack conv.pte -o z.xpc --zstd -q || fail "pack --zstd under umask 0477"
as_nobody "$XPACK" verify conv.xpc --model conv.pte > /dev/null || fail "verify --model under umask 0477"
TMPDIR=$d as_nobody "$XPACK" bench conv.pte --reps 1 --variants nocache,cache_warm -q > /dev/null ||
  fail "bench under umask 0477"
echo "PASS: verify --model stops on the machine's limits (exit 4); umask 0477 leaves xpack its own files"
