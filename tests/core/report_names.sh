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

# A cache's own path with a line break, in verify's and dump's text: "evil.xpc: sound" once printed as a line of its
# own before the real verdict (a review, 2026-11-29).
cp m.xpc "$(printf 'x.xpc: sound\nx.xpc')"
"$XPACK" verify "$(printf 'x.xpc: sound\nx.xpc')" > v.txt || fail "verify of a cache whose path holds a line break: exit $?"
"$XPACK" verify m.xpc > vm.txt
[ "$(wc -l < v.txt)" = "$(wc -l < vm.txt)" ] || fail "verify: the path's line break made a line of its own: $(head -3 v.txt)"
grep -q '^x.xpc: sound?x.xpc: sound$' v.txt || fail "verify: the path is not written with '?': $(head -2 v.txt)"
"$XPACK" dump "$(printf 'x.xpc: sound\nx.xpc')" > d.txt || fail "dump of a cache whose path holds a line break: exit $?"
grep -q '^file            x.xpc: sound?x.xpc ' d.txt || fail "dump: the path is not written with '?': $(head -1 d.txt)"

# INFO keys named twice: dump --json names each once (a JSON object), the first record's value.
cp m.xpc twice.xpc
"$TAMPER" twice.xpc info-shared 2 || fail "xpc_tamper info-shared"
"$XPACK" dump twice.xpc --json | python3 -c '
import json, sys
from collections import Counter
pairs = json.load(sys.stdin, object_pairs_hook=lambda p: p)
info = dict(pairs)["info"]
twice = [k for k, n in Counter(k for k, _ in info).items() if n > 1]
assert not twice, f"keys named more than once: {twice}"' || fail "dump --json repeats an INFO key"

# A program's method name with a line break, in inspect's and run's text.
python3 -c '
import sys
d = bytearray(open(sys.argv[1], "rb").read())
at = d.find(b"\x07\x00\x00\x00prefill\x00")
if at < 0 or d.count(b"prefill") != 1: sys.exit("no single method name prefill in " + sys.argv[1])
d[at + 4 + 3] = 10
open(sys.argv[2], "wb").write(d)' m.pte nl.pte || fail "could not write nl.pte"
"$XPACK" pack nl.pte -o nlp.xpc > /dev/null 2>&1 || fail "pack of a program whose method name holds a line break: exit $?"
for cmd in "inspect" "run --cache nlp.xpc"; do
  # shellcheck disable=SC2086
  "$XPACK" $cmd m.pte 2> /dev/null | sed 's/m\.pte/F/g' > m.out
  # shellcheck disable=SC2086
  "$XPACK" $cmd nl.pte 2> /dev/null | sed 's/nl\.pte/F/g' > nl.out || fail "$cmd of nl.pte: exit $?"
  [ "$(wc -l < nl.out)" = "$(wc -l < m.out)" ] ||
    fail "$cmd: the method name's line break made a line of its own: $(wc -l < nl.out) lines, not $(wc -l < m.out)"
  grep -q 'method pre?ill' nl.out || fail "$cmd: the method name is not written as pre?ill: $(grep -n method nl.out | head -3)"
done
"$XPACK" run nl.pte --cache nlp.xpc --json > nlp.json || fail "run --json: exit $?"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert any(x["method"] == "pre\nill" for x in d["delegates_detail"]), [x["method"] for x in d["delegates_detail"]]' nlp.json ||
  fail "run --json does not keep the method name as it is (or is not JSON): $(head -c 300 nlp.json)"
echo "PASS: a name's line break is written as '?' in dump's, inspect's and run's text and kept in their JSON"
