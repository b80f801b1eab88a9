#!/usr/bin/env bash
# xpack export --executorch on generated programs and on a fixture covering every naming case: the output,
# read back by read_xpwc.py (written from the format description), matches the cache entry by entry, and
# an emulation of ExecuTorch's weights cache over it (xpwc-run) leaves XNNPACK nothing to pack.
XPACK=$1; GEN=$2; FIXTURE=$3; SUBGRAPHS=$4; XPWC_RUN=$5
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../model/lib.sh"
READ="python3 $here/read_xpwc.py"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

# export_and_compare NAME CACHE [EXPECT]: export, the validity warning, then the entry-by-entry comparison.
export_and_compare() {
  local n=$1 cache=$2 expect=${3:-}
  "$XPACK" dump --json "$cache" > "$n.dump.json" || fail "$n: dump"
  "$XPACK" export --executorch "$cache" "$n.xpwc" --json > "$n.export.json" 2> "$n.err" || fail "$n: export: $(cat "$n.err")"
  grep -q "valid only in an app whose XNNPACK packs exactly like" "$n.err" || fail "$n: no validity warning: $(cat "$n.err")"
  grep -q "xpack verify $cache\` must say every entry is served" "$n.err" || fail "$n: the warning does not say how to check"
  $READ compare --xpwc "$n.xpwc" --xpc "$cache" --dump "$n.dump.json" --export "$n.export.json" --expect "$expect" \
    || fail "$n: the export does not match the cache"
}

echo "== LLM-like programs (4 MiB of weights): fp32, 4-bit"
"$GEN" llm --size 4M -o llm.pte > /dev/null
"$GEN" llm-q4 --size 4M -o q4.pte > /dev/null
"$XPACK" pack llm.pte -o llm.xpc > /dev/null
"$XPACK" pack q4.pte -o q4.xpc > /dev/null
export_and_compare llm llm.xpc "skipped=0,module_path_records=0"
export_and_compare q4 q4.xpc "skipped=0,module_path_records=0"
"$XPWC_RUN" llm.pte --xpwc llm.xpwc || fail "llm: ExecuTorch-like run"
"$XPWC_RUN" q4.pte --xpwc q4.xpwc || fail "q4: ExecuTorch-like run"
$READ selftest llm.xpwc || fail "the reader accepted a damaged file"

echo "== 16 KiB pages (Apple targets): large regions page-aligned in the export too"
"$XPACK" pack llm.pte -o llm16k.xpc --page-size 16384 > /dev/null
export_and_compare llm16k llm16k.xpc "skipped=0"
python3 - <<'PY' || fail "no region large enough to check 16 KiB alignment"
import json
d = json.load(open("llm16k.dump.json"))
assert d["page_alignment"] == 16384 and any(r["size"] >= 16384 for r in d["regions"])
PY

echo "== two programs sharing layers; other kinds of weights"
"$GEN" llm --size 4M --variant B -o b.pte > /dev/null
"$XPACK" pack llm.pte b.pte -o ab.xpc > /dev/null
export_and_compare ab ab.xpc "skipped=0"
"$XPWC_RUN" llm.pte b.pte --xpwc ab.xpwc || fail "two programs: ExecuTorch-like run"
for k in qd8-qc8w fp16 deconv conv ptd; do
  if [ $k = ptd ]; then "$GEN" ptd -o ptd.pte --ptd w.ptd > /dev/null; D="--data w.ptd"; else "$GEN" $k -o $k.pte > /dev/null; D=""; fi
  "$XPACK" pack $k.pte $D -o $k.xpc > /dev/null || fail "$k: pack"
  export_and_compare $k $k.xpc
  "$XPWC_RUN" $k.pte $D --xpwc $k.xpwc || fail "$k: ExecuTorch-like run"
done

echo "== every naming case (interop-fixture)"
"$FIXTURE" cache fixture.xpc || fail "fixture"
# 13 entries: 2 with unnamed constants, 1 C API identity, 2 sharing a name with other bytes are skipped;
# two entries are one record; two records share one region; two records are named by module paths.
export_and_compare fixture fixture.xpc \
  "entries=13,exported=8,records=7,unnamed_constant=2,not_an_executorch_key=1,ambiguous_name=2,module_path_records=2,shared_regions=1,merged_records=1"
"$XPACK" export --executorch fixture.xpc fixture_text.xpwc > text.out 2> text.err || fail "fixture: text export"
grep -q "skipped 5 entries that ExecuTorch's naming cannot express" text.out || fail "text: skipped count: $(cat text.out)"
grep -q "2 with a constant that has no named key" text.out || fail "text: unnamed: $(cat text.out)"
grep -q "2 records are named by module paths" text.out || fail "text: module paths: $(cat text.out)"
cmp -s fixture.xpwc fixture_text.xpwc || fail "text and JSON exports differ"
# Exporting again replaces the file in place, atomically; no temporary file is left.
"$XPACK" export --executorch fixture.xpc fixture.xpwc > /dev/null 2>&1 || fail "re-export"
cmp -s fixture.xpwc fixture_text.xpwc || fail "re-export differs"
[ -z "$(find . -name '.xpack-*')" ] || fail "temporary files left behind"

echo "== nothing ExecuTorch could name: exit 0, nothing written"
"$SUBGRAPHS" pack subgraphs.xpc > /dev/null || fail "xpack-subgraphs pack"
out=$("$XPACK" export --executorch subgraphs.xpc subgraphs.xpwc 2>&1) || fail "nothing to export: exit $?"
echo "$out" | grep -q "nothing to export" || fail "nothing to export: $out"
echo "$out" | grep -q "not an ExecuTorch named key" || fail "nothing to export, reason: $out"
[ ! -e subgraphs.xpwc ] || fail "wrote a file with no records"
echo "generated: ok"
