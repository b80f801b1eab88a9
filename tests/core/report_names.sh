#!/usr/bin/env bash
# Names from files inside a report's own lines: a line break in one once started a line of its own in `dump`'s
# and `inspect`'s text (the report keeps its own line breaks, and a name's went through with them; found by a
# review), so that a crafted cache could print lines that look like xpack's. Each control character of a name is
# written as '?': the report has as many lines as without the line break, and --json keeps the name as it is.
XPACK=$1; TAMPER=$2; GEN=$3
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

"$GEN" llm --size 1M -o m.pte > /dev/null
"$XPACK" pack m.pte -o m.xpc > /dev/null 2>&1
cp m.xpc nl.xpc
"$TAMPER" nl.xpc info-newline || fail "xpc_tamper info-newline"
"$XPACK" dump m.xpc > m.txt
"$XPACK" dump nl.xpc > nl.txt || fail "dump of a cache whose INFO key holds a line break: exit $?"
[ "$(wc -l < nl.txt)" = "$(wc -l < m.txt)" ] || fail "the line break made a line of its own: $(wc -l < nl.txt) lines, not $(wc -l < m.txt)"
grep -q '^info            ?' nl.txt || fail "the INFO key's line break is not written as '?': $(grep -n -A1 '^info' nl.txt | head -4)"
"$XPACK" dump nl.xpc --json > nl.json || fail "dump --json: exit $?"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert any(k.startswith("\n") for k in d["info"]), d["info"]' nl.json ||
  fail "dump --json does not keep the key as it is: $(head -c 300 nl.json)"
echo "PASS: a name's line break is written as '?' in dump's text and kept in its JSON"
