#!/usr/bin/env bash
# A cache renamed over by another file while a command reads it. verify and export open their input by name
# more than once; the LD_PRELOAD shim change_on_map.c renames another file into place the moment the command
# first maps the cache, so every later open by name gets the other file, on every machine.
#   - export checks the bytes it exports: the mapping it writes from, not the file the name points to later
#     (once a damaged cache replaced by a sound one was exported with exit 0, its damage included);
#   - verify, with or without --model, and export's report would describe two files as one: exit 4 naming
#     the file, stdout empty; export's output stays, made from the file as first opened.
# Without a replacement the shim changes nothing and both commands pass.
#   replaced_input.sh XPACK GENMODEL SHIM
set -euo pipefail
XPACK=$1 GEN=$2 SHIM=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
"$GEN" llm -o a.pte --size 1M --seed 1 > /dev/null
"$GEN" llm -o b.pte --size 1M --seed 2 > /dev/null
"$XPACK" -q pack a.pte -o a.xpc
"$XPACK" -q pack b.pte -o b.xpc
"$XPACK" -q export --executorch a.xpc a.pwc
cmp -s a.xpc b.xpc && fail "the two caches are the same bytes: the test would show nothing"

# with_swap WITH -- COMMAND...: runs COMMAND with the shim renaming a copy of WITH over c.xpc at its first
# mapping of c.xpc (a fresh copy of a.xpc, or of `damaged` when DAMAGED=1); rc, stdout.txt, stderr.txt.
with_swap() {
  local with=$1; shift 2
  cp "${SOURCE:-a.xpc}" c.xpc; cp "$with" new.xpc
  set +e
  XPACK_TEST_REPLACE_ON_MAP=c.xpc XPACK_TEST_REPLACE_WITH=new.xpc LD_PRELOAD=$SHIM "$@" > stdout.txt 2> stderr.txt
  rc=$?
  set -e
  [ ! -e new.xpc ] || fail "$*: the shim did not replace c.xpc (the command never mapped it)"
}

echo "no replacement: the shim alone changes nothing"
cp a.xpc c.xpc
LD_PRELOAD=$SHIM "$XPACK" verify c.xpc --model a.pte > stdout.txt 2> stderr.txt || fail "verify: $(cat stderr.txt)"
LD_PRELOAD=$SHIM "$XPACK" -q export --executorch c.xpc o.pwc > stdout.txt 2> stderr.txt || fail "export: $(cat stderr.txt)"
cmp -s o.pwc a.pwc || fail "export under the shim wrote other bytes"
rm o.pwc

for model in "" "--model a.pte"; do
  # shellcheck disable=SC2086
  with_swap b.xpc -- "$XPACK" verify c.xpc $model
  [ "$rc" = 4 ] || fail "verify $model of a replaced cache: exit $rc, expected 4: $(cat stderr.txt) $(cat stdout.txt)"
  grep -q "^xpack: c.xpc changed while verify read it" stderr.txt || fail "verify $model: the message: $(cat stderr.txt)"
  [ ! -s stdout.txt ] || fail "verify $model: stdout is not empty: $(cat stdout.txt)"
  echo "verify $model, replaced: exit 4, $(cat stderr.txt)"
done

with_swap b.xpc -- "$XPACK" export --executorch c.xpc o.pwc
[ "$rc" = 4 ] || fail "export of a replaced cache: exit $rc, expected 4: $(cat stderr.txt)"
grep -q "^xpack: c.xpc changed while export read it" stderr.txt || fail "export: the message: $(cat stderr.txt)"
[ ! -s stdout.txt ] || fail "export: stdout is not empty: $(cat stdout.txt)"
cmp -s o.pwc a.pwc || fail "export of a replaced cache did not write the cache it first opened"
rm o.pwc
echo "export, replaced: exit 4, the output made from the file first opened; $(cat stderr.txt)"

# A damaged cache (one byte of its first region flipped: open passes, verify does not) replaced by a sound one.
cp a.xpc damaged.xpc
region=$("$XPACK" dump a.xpc --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["regions"][0]["offset"])')
python3 - damaged.xpc "$region" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]) + 100); b = f.read(1); f.seek(int(sys.argv[2]) + 100); f.write(bytes([b[0] ^ 1]))
PY
set +e; "$XPACK" verify damaged.xpc > /dev/null 2>&1; st=$?; set -e
[ "$st" = 1 ] || fail "the damaged cache is not found damaged by verify: exit $st"
SOURCE=damaged.xpc with_swap a.xpc -- "$XPACK" export --executorch c.xpc o.pwc
[ "$rc" = 3 ] || fail "export of a damaged cache replaced by a sound one: exit $rc, expected 3: $(cat stderr.txt)"
grep -q "damaged, nothing exported" stderr.txt || fail "export of a damaged cache: the message: $(cat stderr.txt)"
[ ! -e o.pwc ] || fail "export of a damaged cache wrote its output"
echo "export of a damaged cache replaced by a sound one: exit 3, nothing written"
echo "replaced_input: ok"
