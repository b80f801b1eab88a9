#!/usr/bin/env bash
# The rule for replacing a cache (xpack_loader.h, docs/INTEGRATION.md): caches are immutable; replace one
# by renaming a new file over it. Shown with real processes:
#   - opened, then replaced by rename: a mapped and a read cache both keep serving the old file, with the
#     same hits and outputs as an undisturbed run;
#   - opened with XPACK_OPEN_READ, then truncated in place: still the same hits and outputs;
#   - opened mapped, then truncated in place: the process dies of SIGBUS on its first look-up. This is
#     the hazard the rule exists for; if it ever stops happening, update the rule's text;
#   - truncated before open: open refuses it, naming the file's size and the least size it must have.
#   change_underneath.sh XPACK XPACK-SUBGRAPHS CHANGE_UNDERNEATH
XPACK=$1; SUB=$2; CU=$3
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

"$SUB" pack good.xpc > /dev/null
"$CU" > reference.txt
"$CU" --cache good.xpc > undisturbed.txt
hashes() { grep '^graph ' "$1" | sed -E 's/ lookups [0-9]+ hits [0-9]+//'; }
hits() { grep '^total ' "$1"; }
hashes reference.txt | cmp -s - <(hashes undisturbed.txt) || fail "the cache changes outputs"
grep -q '^total lookups [1-9][0-9]* hits [1-9]' undisturbed.txt || fail "nothing hit: $(cat undisturbed.txt)"
echo "  undisturbed: $(hits undisturbed.txt)"

# same_as_undisturbed LABEL OPEN_FLAGS... -- COMMAND
same_as_undisturbed() {
  local label=$1; shift
  local flags=()
  while [ "$1" != -- ]; do flags+=("$1"); shift; done
  shift
  cp good.xpc c.xpc
  "$CU" --cache c.xpc "${flags[@]}" --then "$1" > out.txt 2> err.txt || fail "$label: exit $?: $(cat err.txt)"
  hashes out.txt | cmp -s - <(hashes reference.txt) || fail "$label: outputs differ"
  [ "$(hits out.txt)" = "$(hits undisturbed.txt)" ] || fail "$label: $(hits out.txt), undisturbed $(hits undisturbed.txt)"
  echo "  $label: outputs identical, $(hits out.txt)"
}
echo "not a cache" > other.txt
same_as_undisturbed "mapped, replaced by rename" -- "cp other.txt new.tmp && mv new.tmp c.xpc"
same_as_undisturbed "read, replaced by rename" --read -- "cp other.txt new.tmp && mv new.tmp c.xpc"
same_as_undisturbed "read, truncated to 0 in place" --read -- "truncate -s 0 c.xpc"
same_as_undisturbed "read, truncated to 4096 in place" --read -- "truncate -s 4096 c.xpc"

# Mapped and truncated in place: SIGBUS (exit status 128 + 7 as the shell reports it).
cp good.xpc c.xpc
set +e; { "$CU" --cache c.xpc --then "truncate -s 4096 c.xpc" > out.txt 2> err.txt; } 2> /dev/null; st=$?; set -e
# (AddressSanitizer, when the build has it, catches the signal and reports it instead.)
[ "$st" = $((128 + $(kill -l BUS))) ] || grep -q "AddressSanitizer: BUS" err.txt ||
  fail "mapped and truncated in place: exit $st, expected SIGBUS: $(cat err.txt)"
echo "  mapped, truncated in place: killed by SIGBUS, as the rule says"

# Truncated before open: refused at open. When the cut reaches into the data area, the header says how
# big the file must at least be; a shorter cut only removes the footer, and the message says so with the size.
size=$(stat -c %s good.xpc)
data_end=$("$XPACK" dump --json good.xpc | python3 -c 'import json,sys; d=json.load(sys.stdin)["data"]; print(d["offset"] + d["size"])')
for cut in 1 80 $((size - data_end - 79)) $((size / 2)); do
  left=$((size - cut))
  head -c "$left" good.xpc > c.xpc
  for flag in "" --read; do
    set +e; "$CU" --cache c.xpc $flag > out.txt 2> err.txt; st=$?; set -e
    [ "$st" = 3 ] || fail "truncated by $cut bytes before open $flag: exit $st"
  done
  if [ "$left" -lt $((data_end + 80)) ]; then
    grep -q "c.xpc: truncated: the file has $left bytes, but its header puts the end of the data area at byte $data_end, so it must have at least $((data_end + 80))" err.txt ||
      fail "truncated by $cut bytes: message: $(cat err.txt)"
  else
    grep -q "c.xpc: footer magic \"XPACKEND\" missing at offset $((left - 8)): the file ($left bytes) was truncated or appended to" err.txt ||
      fail "truncated by $cut bytes: message: $(cat err.txt)"
  fi
  echo "  truncated by $cut bytes before open: refused: $(cat err.txt)"
done
echo "change_underneath: ok"
