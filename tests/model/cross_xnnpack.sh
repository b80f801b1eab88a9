#!/usr/bin/env bash
# A cache packed by an xpack built with one XNNPACK, opened by an xpack built with another (for example the
# default 4ea82e5 and the ExecuTorch v1.3-1.4 pin 1adaa7c7): the loader refuses the whole file as
# incompatible (another build identifier), XNNPACK packs every weight itself, and the outputs are identical
# to a run without any cache. Both directions, fp32 and 4-bit programs, mapped and read.
# Usage: cross_xnnpack.sh XPACK XPACK_OTHER GENMODEL   (exit 77 when XPACK_OTHER is not given or missing)
XPACK=$1; OTHER=${2:-}; GEN=$3
. "$(dirname "$0")/lib.sh"
if [ -z "$OTHER" ] || [ ! -x "$OTHER" ]; then
  echo "SKIP: needs an xpack built with another XNNPACK (configure with -DXPACK_OTHER_XNNPACK_XPACK=PATH;"
  echo "      tools/dev.sh test does it for the pin's build when ../shared/vendor is present)"
  exit 77
fi
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

build_id() { "$1" --version --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["xnnpack_build_identifier"])'; }
id_a=$(build_id "$XPACK"); id_b=$(build_id "$OTHER")
echo "  A: $("$XPACK" --version | tail -n1)"
echo "  B: $("$OTHER" --version | tail -n1)"
[ "$id_a" != "$id_b" ] || fail "both xpacks have XNNPACK build identifier $id_a: this test needs two XNNPACK builds"

# check_refused NOCACHE.json CACHE.json: the file refused as a whole for the build identifier, nothing served,
# every look-up missed, every delegate ran, outputs bit-identical to no cache.
check_refused() {
  python3 - "$@" <<'PY'
import json, sys
n, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert n["failed"] == 0 and c["failed"] == 0, "a delegate failed to run"
assert c["cache_refused"] and "build" in c["cache_refused"].lower(), f"not refused for the build: {c['cache_refused']!r}"
# Nothing served: every look-up misses and XNNPACK packs every weight itself (into the provider's heap).
assert c["hits"] == 0 and c["misses"] == c["lookups"] > 0, (c["hits"], c["misses"], c["lookups"])
assert c["heap_fallback_bytes"] > 0, c["heap_fallback_bytes"]
assert c["families"] and all(f["reason"] == "file_refused" for f in c["families"]), c["families"]
assert n["delegates"] == c["delegates"] > 0
for a, b in zip(n["delegates_detail"], c["delegates_detail"]):
    assert a["output_xxh3"] == b["output_xxh3"] and a["output_xxh3"], f"outputs differ: {a['method']}#{a['index']}"
print(f"  refused ({c['cache_refused']}); {c['delegates']} delegates, outputs identical to no cache")
PY
}

for kind in llm llm-q4 conv; do
  "$GEN" $kind -o $kind.pte > /dev/null
  for dir in AB BA; do
    if [ $dir = AB ]; then packer=$XPACK; runner=$OTHER; else packer=$OTHER; runner=$XPACK; fi
    echo "== $kind: packed by ${dir:0:1}, run by ${dir:1:1}"
    "$packer" pack $kind.pte -o $kind.$dir.xpc > /dev/null || fail "$kind: pack by ${dir:0:1}"
    # The packer's own XNNPACK serves it (the file is sound, so a refusal below is about the other build).
    "$packer" run $kind.pte --cache $kind.$dir.xpc --json > own.json || fail "$kind: run by the packer"
    python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); assert c["cache_refused"] is None and c["hits"] > 0, c' \
      own.json || fail "$kind: the packer's own run is not served"
    "$runner" run $kind.pte --json > n.json || fail "$kind: run without cache by ${dir:1:1}"
    "$runner" run $kind.pte --cache $kind.$dir.xpc --json > c.json || fail "$kind: run with the other's cache"
    check_refused n.json c.json || fail "$kind: ${dir:1:1} did not refuse ${dir:0:1}'s cache"
    "$runner" run $kind.pte --cache $kind.$dir.xpc --read --json > r.json || fail "$kind: --read run"
    check_refused n.json r.json > /dev/null || fail "$kind: --read: ${dir:1:1} did not refuse ${dir:0:1}'s cache"
    # verify by the other build: the file is sound but not servable here, so the check fails (exit 1).
    set +e; "$runner" verify $kind.$dir.xpc --model $kind.pte > verify.txt 2>&1; s=$?; set -e
    [ $s = 1 ] || fail "$kind: verify by ${dir:1:1} exits $s, expected 1: $(tail -n 3 verify.txt)"
  done
done
echo "PASS"
