#!/usr/bin/env bash
# A report larger than the memory left is refused whole, never printed cut short. Commands hold their report
# until their exit code is known; glibc's memory stream, which held it, dropped what it could not find memory
# for without an error, so `dump` of a sound cache printed 34 MB of a 128 MB report and exited 0. A sound
# cache of 16 entries naming one 8 MB identity (within the tools' sharing limit) asks for a 128 MB report;
# under a 96 MB address-space limit dump must exit 4, saying so, with nothing on stdout.
XPACK=$1; CRAFT=$2
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT

"$CRAFT" "$d/big.xpc" shared-name 16 8000000 > /dev/null
"$CRAFT" "$d/small.xpc" shared-name 2 1000 > /dev/null
limit=$((96 * 1024)) # KiB
if ! (ulimit -v $limit; "$XPACK" dump "$d/small.xpc" > /dev/null 2>&1); then
  echo "SKIP: xpack does not run under a $((limit / 1024)) MiB address-space limit here (a sanitizer build?)"
  exit 77
fi
"$XPACK" dump "$d/big.xpc" | wc -c > "$d/full_size" # the whole report, with memory to hold it
[ "$(cat "$d/full_size")" -gt $((limit * 1024)) ] || fail "the report ($(cat "$d/full_size") bytes) fits the limit"
set +e; (ulimit -v $limit; exec "$XPACK" dump "$d/big.xpc") > "$d/out" 2> "$d/err"; st=$?; set -e
[ "$st" = 4 ] || fail "dump under the limit: exit $st, expected 4 (stdout $(wc -c < "$d/out") bytes): $(head -c 300 "$d/err")"
[ ! -s "$d/out" ] || fail "dump under the limit printed $(wc -c < "$d/out") bytes of a report it could not hold"
grep -q "out of memory while holding the report" "$d/err" || fail "dump does not say why: $(cat "$d/err")"
set +e; (ulimit -v $limit; exec "$XPACK" dump --json "$d/big.xpc") > "$d/out" 2> "$d/err"; st=$?; set -e
[ "$st" = 4 ] && [ ! -s "$d/out" ] || fail "dump --json under the limit: exit $st, $(wc -c < "$d/out") bytes on stdout"
echo "  a $(cat "$d/full_size")-byte report under a $((limit / 1024)) MiB limit: exit 4, nothing printed"
