#!/usr/bin/env bash
# One cache per class of CPU, the one that fits chosen at start-up (xpack_cache_open_best through
# `xpack run --cache A --cache B ...`): the first file served whole is kept; else the one serving the most
# entries; files that do not open or are refused whole are passed over; files after the chosen one are not
# opened. Stand-ins for caches packed for other CPUs: one family's probe changed (that family's entries are not
# served here), another XNNPACK build (nothing served) and an entry with an unknown flag (refused alone),
# checksums re-sealed (xpc_tamper).
XPACK=$1; GEN=$2; TAMPER=$3
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

"$GEN" llm-q4 -o q4.pte > /dev/null # two packing families
"$XPACK" -q pack q4.pte -o q4.xpc
cp q4.xpc other_probe.xpc; "$TAMPER" other_probe.xpc probe 0
cp q4.xpc other_build.xpc; "$TAMPER" other_build.xpc build-id
cp q4.xpc bad_entry.xpc; "$TAMPER" bad_entry.xpc entry-flags # entry 0 refused alone, its family served
"$XPACK" dump --json q4.xpc > dump.json
"$XPACK" run q4.pte --json > n.json

"$XPACK" run q4.pte --cache other_build.xpc --cache missing.xpc --cache other_probe.xpc --cache q4.xpc \
  --cache other_probe.xpc --json > all.json
"$XPACK" run q4.pte --cache other_build.xpc --cache missing.xpc --cache other_probe.xpc --cache q4.xpc \
  --cache other_probe.xpc > all.txt
"$XPACK" run q4.pte --cache other_build.xpc --cache other_probe.xpc --json > most.json
"$XPACK" run q4.pte --cache other_build.xpc --cache other_build.xpc --json > none.json
"$XPACK" run q4.pte --cache bad_entry.xpc --cache q4.xpc --json > bad_entry.json
set +e; "$XPACK" run q4.pte --cache missing.xpc --cache missing2.xpc > fail.txt 2> fail.err; st=$?; set -e
[ "$st" = 3 ] && [ ! -s fail.txt ] || fail "no cache opens: exit $st, expected 3 and nothing on stdout"
grep -q "no --cache file opens; the first: missing.xpc: cannot open" fail.err || fail "no cache opens: $(cat fail.err)"
grep -q "^cache: q4.xpc chosen of 5" all.txt && grep -q "^  other_probe.xpc: 22 of 36 entries served here$" all.txt &&
  grep -q "^  missing.xpc: not opened: missing.xpc: cannot open" all.txt || fail "text report: $(head -8 all.txt)"
# Another program's cache, served whole here, before this program's: this program's is kept, as the adapter keeps
# it (run opens the programs first when it chooses, and passes the first one's bytes: xpack_open_limits.program).
"$GEN" llm -o llm.pte > /dev/null
"$XPACK" -q pack llm.pte -o llm.xpc
"$XPACK" run q4.pte --cache llm.xpc --cache q4.xpc --json > program.json
"$XPACK" run q4.pte --cache llm.xpc --cache q4.xpc > program.txt
grep -q "^  llm.xpc: [0-9]* of [0-9]* entries served here (built from another program)$" program.txt ||
  fail "text report of another program's cache: $(head -4 program.txt)"
"$GEN" conv -o conv.pte > /dev/null
"$XPACK" -q pack conv.pte -o conv_a.xpc
cp conv_a.xpc conv_b.xpc
"$XPACK" run conv.pte --skip-small --cache conv_a.xpc --cache conv_b.xpc --json > skipped.json
python3 - <<'PY'
import json
from collections import Counter
dump, n = json.load(open("dump.json")), json.load(open("n.json"))
entries = len(dump["entries"])
of_family = Counter(e["family"] for e in dump["entries"])
assert len(of_family) == 2, of_family

def outputs_alike(c):
    assert c["failed"] == 0
    for a, b in zip(n["delegates_detail"], c["delegates_detail"]):
        assert a["output_xxh3"] == b["output_xxh3"], "outputs differ"

a = json.load(open("all.json"))
states = [(c["file"], c["state"], c["entries"], c["entries_served"]) for c in a["cache_candidates"]]
assert states == [("other_build.xpc", "passed over", entries, 0), ("missing.xpc", "not opened", 0, 0),
                  ("other_probe.xpc", "passed over", entries, entries - of_family[0]),
                  ("q4.xpc", "chosen", entries, entries), ("other_probe.xpc", "not tried", 0, 0)], states
assert a["cache_candidates"][0]["message"] == "refused whole" and "cannot open" in a["cache_candidates"][1]["message"]
assert a["cache"] == "q4.xpc" and a["hits"] == a["lookups"] > 0 and a["misses"] == 0, a["cache"]
outputs_alike(a)

m = json.load(open("most.json"))  # nothing served whole: the file serving the most entries
assert m["cache"] == "other_probe.xpc" and [c["state"] for c in m["cache_candidates"]] == ["passed over", "chosen"]
assert m["hits"] > 0 and m["misses"] == m["refused_probe"] > 0, (m["hits"], m["misses"])
outputs_alike(m)

z = json.load(open("none.json"))  # none serves anything: the first that opened, its refusal reported
assert z["cache"] == "other_build.xpc" and "XNNPACK build" in z["cache_refused"] and z["hits"] == 0
assert [c["state"] for c in z["cache_candidates"]] == ["chosen", "passed over"], z["cache_candidates"]
outputs_alike(z)
b = json.load(open("bad_entry.json"))  # an entry the loader refuses alone is not counted as served
assert [(c["state"], c["entries_served"]) for c in b["cache_candidates"]] == [("passed over", entries - 1),
                                                                             ("chosen", entries)], b["cache_candidates"]
assert b["cache"] == "q4.xpc" and b["hits"] == b["lookups"] > 0, b["cache"]
p = json.load(open("program.json"))  # this program's cache over another program's served whole
assert p["cache"] == "q4.xpc" and p["hits"] == p["lookups"] > 0, p["cache"]
assert [(c["state"], c["other_program"]) for c in p["cache_candidates"]] == [("passed over", True), ("chosen", False)], \
    p["cache_candidates"]
s = json.load(open("skipped.json"))  # a file skipped as small is kept at once: the others would be skipped alike
assert s["cache"] == "conv_a.xpc" and s["cache_refused"].startswith("skipped unread"), s["cache_refused"]
assert [c["state"] for c in s["cache_candidates"]] == ["chosen", "not tried"] and s["lookups"] == 0
print(f"  chose the cache served whole of 5 candidates; else the one serving {entries - of_family[0]} of {entries}")
PY
