# Helpers for the model tests: run xpack with and without a cache and compare in Python (json).
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
status_of() { set +e; "$@" > /dev/null 2>&1; local s=$?; set -e; echo $s; }
# compare_runs NOCACHE.json CACHE.json [expect_hits]: outputs bit-identical, no misses, hits > 0 unless told 0.
compare_runs() {
  python3 - "$@" <<'PY'
import json, sys
n, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
expect_hits = sys.argv[3] if len(sys.argv) > 3 else "some"
assert n["failed"] == 0 and c["failed"] == 0, "a delegate failed to run"
assert n["delegates"] == c["delegates"] and n["delegates"] > 0
for a, b in zip(n["delegates_detail"], c["delegates_detail"]):
    assert a["output_xxh3"] == b["output_xxh3"] and a["output_xxh3"], f"outputs differ: {a['method']}#{a['index']}"
assert c["misses"] == 0, f"misses: {c['misses']} (unbound {c['misses_unbound']}, not found {c['misses_not_found']}, refused {c['misses_refused']})"
assert c["heap_fallback_bytes"] == 0
if expect_hits == "some": assert c["hits"] > 0 and c["hits"] == c["lookups"], (c["hits"], c["lookups"])
print(f"  {c['delegates']} delegates, {c['lookups']} look-ups, {c['hits']} hits, 0 misses, outputs identical")
PY
}
# verify_model_covers VERIFY.json: `verify --model --json` of a cache packed from those very models compared
# every entry (as many weights as the cache holds, all alike) and ran every delegate alike, all hits.
verify_model_covers() {
  python3 - "$1" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
m = v["model"]
assert v["sound"] and m is not None, v
assert m["weights_compared"] == m["weights_agreeing"] == v["machine"]["entries"] > 0, (m, v["machine"]["entries"])
assert m["ran_with_cache"] and m["delegates_run"] == m["delegates_identical"] > 0, m
assert m["misses"] == 0 and m["hits"] == m["lookups"] > 0, m
print(f"  verify --model: {m['weights_compared']} weights alike, {m['delegates_run']} delegates alike, {m['hits']} hits")
PY
}
