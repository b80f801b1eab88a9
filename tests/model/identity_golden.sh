#!/usr/bin/env bash
# Identities pinned: every cache entry is named by its weights' identities (docs/FORMAT.md 6,
# libpack/et/IDENTITY.md), so a change in how xpack computes them makes every cache packed before it miss in
# full, with no error anywhere. For generated programs of each kind of weight, the SHA-256 of their sorted
# identities (and ambiguity) must stay as pinned here; a deliberate change of identities changes this list in the
# same commit, and says so.
#   identity_golden.sh XPACK GENMODEL
XPACK=$1; GEN=$2
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
# identities NAME [--data FILE]: "COUNT HASH" of the identities `inspect -v --json` gives NAME.pte's constants.
identities() {
  local name=$1; shift
  "$XPACK" inspect -v --json "$name.pte" "$@" | python3 -c '
import hashlib, json, sys
d = json.load(sys.stdin)
ids = sorted("%s %s" % (c["identity"], c["ambiguous"]) for p in d["programs"] for m in p["methods"]
             for dl in m["delegates"] for c in (dl.get("constants") or []))
print(len(ids), hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16])'
}
failures=0
# check "GENMODEL ARGS" "COUNT HASH"
check() {
  local spec=$1 expected=$2 kind=${1%% *} got
  # shellcheck disable=SC2086
  "$GEN" $spec -o "$kind.pte" > /dev/null
  if [ "$kind" = ptd ]; then got=$(identities "$kind" --data "$kind.ptd"); else got=$(identities "$kind"); fi
  if [ "$got" = "$expected" ]; then
    echo "  $spec: $got"
  else
    echo "FAIL: $spec: identities $got, pinned $expected: caches packed before this change would miss" >&2
    failures=$((failures + 1))
  fi
}
check "llm-q4 --size 256K" "60 66be03523c5ea12e"
check "llm --size 256K --name-keys" "30 7af00c3187737c21"
check "qd8-qc8w" "6 0736169c80edd13f"
check "conv" "6 e16f52aa88f88900"
check "deconv" "4 86154e5cda7a8f64"
check "fp16" "4 a229393555fa2753"
check "bf16" "4 22e3830f27f13fec"
check "shapes-a" "4 87ed5923aa3cf342"
check "shapes-bias-two" "6 8cd523875619c43e"
check "shapes-alias" "2 1af3de49aee43be0"
check "ptd --ptd ptd.ptd" "6 365c74177c469474"
[ "$failures" = 0 ] || fail "$failures kind(s) of program are named otherwise than before"
echo "identity_golden: identities as pinned"
