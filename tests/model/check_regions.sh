#!/usr/bin/env bash
# XPACK_OPEN_CHECK_REGIONS (`run --check-regions`): region bytes are not read at open (verify checks them);
# with this flag a damaged region is refused before it is served. Seven bytes flipped in every region: without
# the flag the damaged weights are served (outputs change: the reason verify exists), with it every
# damaged region is refused, XNNPACK packs, and the outputs equal a run without a cache.
XPACK=$1; GEN=$2; FLIP=$3
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
"$GEN" llm --size 1M -o m.pte > /dev/null
"$XPACK" -q pack m.pte -o m.xpc
"$XPACK" run m.pte --json > n.json
"$XPACK" run m.pte --cache m.xpc --check-regions --json > c.json
compare_runs n.json c.json
cp m.xpc bad.xpc
"$XPACK" dump m.xpc --json | python3 -c '
import json, sys
for r in json.load(sys.stdin)["regions"]:
    for k in range(1, 8): print(r["offset"] + r["size"] * k // 8)' > offsets
[ -s offsets ] || fail "no regions listed"
while read -r off; do "$FLIP" bad.xpc "$off" 0xff > /dev/null || fail "flipbyte $off"; done < offsets
"$XPACK" run m.pte --cache bad.xpc --json > served.json
"$XPACK" run m.pte --cache bad.xpc --check-regions --json > checked.json
python3 - <<'PY'
import json
n, served, checked = (json.load(open(f)) for f in ("n.json", "served.json", "checked.json"))
regions = sum(1 for _ in open("offsets")) // 7
outs = lambda r: [d["output_xxh3"] for d in r["delegates_detail"]]
assert outs(served) != outs(n), "a flipped byte in every region changed no output: the test proves nothing"
assert outs(checked) == outs(n), "--check-regions served a damaged region"
assert checked["hits"] == 0 and checked["misses_refused"] == checked["lookups"] > 0, checked
# ... each counted in the refused entry's family too (the families once counted none of them)
assert sum(f["refused"] for f in checked["families"]) == checked["misses_refused"], checked["families"]
print(f"  {regions} damaged regions: served without the flag (outputs differ), all refused with it "
      f"({checked['misses_refused']} look-ups), outputs identical to no cache")
PY
echo "check_regions: ok"
