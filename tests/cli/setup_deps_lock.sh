#!/usr/bin/env bash
# tools/setup-deps.sh runs one at a time per dependency cache: a second run waits for the first (two builds
# started together once unpacked and built into the same work folder). This test holds the cache's lock
# itself, starts setup-deps.sh over an existing XNNPACK (XNNPACK_PREFIX, no apt), and checks that it said it
# was waiting and returned only after the lock was released, printing the prefix as usual.
#   setup_deps_lock.sh REPO XNNPACK_PREFIX
set -euo pipefail
REPO=$1 PREFIX=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v flock > /dev/null || { echo "SKIP: no flock on this machine"; exit 77; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
lock="$d/.setup-deps.lock"

flock "$lock" -c "sleep 2; touch '$d/released'" &
holder=$!
until ! flock -n "$lock" true; do sleep 0.05; done # the holder has it

out=$(XPACK_DEPS_CACHE="$d" XPACK_SKIP_APT=1 XNNPACK_PREFIX="$PREFIX" "$REPO/tools/setup-deps.sh" 2> "$d/stderr.txt")
[ -f "$d/released" ] || fail "setup-deps.sh returned while another run held $lock"
wait "$holder"
grep -q "waiting for another setup-deps.sh using $d" "$d/stderr.txt" ||
  fail "setup-deps.sh did not say it was waiting: $(cat "$d/stderr.txt")"
[ "$(tail -n 1 <<<"$out")" = "XNNPACK_PREFIX=$PREFIX" ] || fail "unexpected last line: $out"

# Uncontended, it does not wait.
XPACK_DEPS_CACHE="$d" XPACK_SKIP_APT=1 XNNPACK_PREFIX="$PREFIX" "$REPO/tools/setup-deps.sh" > /dev/null 2> "$d/stderr2.txt"
! grep -q waiting "$d/stderr2.txt" || fail "setup-deps.sh waited with no other run: $(cat "$d/stderr2.txt")"
echo "setup-deps.sh waited for the lock's holder, then printed the prefix"
