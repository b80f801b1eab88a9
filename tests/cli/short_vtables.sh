#!/usr/bin/env bash
# Programs whose flatbuffer vtables declare the inline sizes ExecuTorch's training export declares
# (xpack-genmodel --short-vtables: a table ending in an 8-byte field declares 4 bytes fewer than its fields
# need; issue 16). The reference verifier and ExecuTorch accept them, so every command must. For each kind,
# the program is generated with and without the option, and for both: inspect, pack, verify, verify --model,
# run and run --cache exit 0. Then: inspect reads the same graphs and constants from both; run with the
# cache gives the outputs of run without it, every look-up served, and both programs give the same
# outputs; the two caches hold the same packed bytes (dump: regions, families, entries, totals; not the
# inputs, which describe each program file's own bytes). Real processes, generated programs.
#   short_vtables.sh XPACK GENMODEL
set -euo pipefail
XPACK=$1 GEN=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

# xp NAME ARGS...: xpack ARGS must exit 0; its stdout goes to NAME.json (every call here asks for --json).
xp() {
  local name=$1; shift
  local rc=0
  "$XPACK" "$@" --json > "$name.json" 2> "$name.err" || rc=$?
  [ "$rc" = 0 ] || fail "xpack $* exited $rc: $(head -c 800 "$name.err")"
}

# same KIND WHAT A.json B.json: the projection WHAT of two JSON reports must be equal and not empty.
same() {
  python3 - "$@" <<'PY' || fail "$1: $2 differ"
import json, sys
kind, what, a, b = sys.argv[1:5]
def project(doc):
    if what == "inspect":   # what each delegate holds, without where it lies in the file
        return [[(m["name"], dl["index"], dl["backend"], dl["values"], dl["nodes"], dl["node_counts"],
                  dl["datatypes"], dl["constant_bytes"], dl["replayable"],
                  [(c["identity"], c["size"], c["value"], c["datatype"]) for c in dl["constants"]])
                 for m in p["methods"] for dl in m["delegates"]] for p in doc["programs"]]
    if what == "outputs":
        return [(x["method"], x["index"], x["output_xxh3"]) for x in doc["delegates_detail"]]
    if what == "packed":    # the packed bytes and what they are for
        return {k: doc[k] for k in ("data", "regions", "families", "entries", "totals")}
    raise SystemExit("unknown projection " + what)
pa, pb = project(json.load(open(a))), project(json.load(open(b)))
if not pa or pa != pb:
    print("%s: %s of %s and %s differ or are empty:\n%s\n%s" % (kind, what, a, b, pa, pb))
    sys.exit(1)
PY
}

# served KIND RUN.json: every look-up of a run with the cache hit, from a cache built from this program.
served() {
  python3 - "$@" <<'PY' || fail "$1: the cache was not served in full"
import json, sys
kind, path = sys.argv[1:3]
r = json.load(open(path))
ok = (r["cache_refused"] is None and r["failed"] == 0 and r["lookups"] > 0 and r["hits"] == r["lookups"]
      and r["misses"] == 0 and all(p["built_from"] for p in r["programs"]))
if not ok:
    print("%s: %s" % (kind, {k: v for k, v in r.items() if k != "delegates_detail"}))
    sys.exit(1)
PY
}

check_kind() { # check_kind KIND [GENMODEL OPTIONS...]
  local kind=$1; shift
  for v in normal short; do
    local opt=() data=()
    [ "$v" = short ] && opt=(--short-vtables)
    [ "$kind" = ptd ] && opt+=(--ptd "$kind-$v.ptd") && data=(--data "$kind-$v.ptd")
    "$GEN" "$kind" -o "$kind-$v.pte" "$@" "${opt[@]}" > /dev/null || fail "xpack-genmodel $kind ${opt[*]}"
    xp "$kind-$v-inspect" inspect "$kind-$v.pte" "${data[@]}"
    xp "$kind-$v-pack" pack "$kind-$v.pte" "${data[@]}" -o "$kind-$v.xpc"
    xp "$kind-$v-verify" verify "$kind-$v.xpc"
    xp "$kind-$v-verify-model" verify "$kind-$v.xpc" --model "$kind-$v.pte" "${data[@]}"
    xp "$kind-$v-run" run "$kind-$v.pte" "${data[@]}"
    xp "$kind-$v-run-cache" run "$kind-$v.pte" "${data[@]}" --cache "$kind-$v.xpc"
    xp "$kind-$v-dump" dump "$kind-$v.xpc"
    served "$kind-$v" "$kind-$v-run-cache.json"
    same "$kind-$v" outputs "$kind-$v-run.json" "$kind-$v-run-cache.json"
  done
  # Without this the rest would prove nothing: the option must have changed the program.
  ! cmp -s "$kind-normal.pte" "$kind-short.pte" || fail "$kind: --short-vtables left the program unchanged"
  same "$kind" inspect "$kind-normal-inspect.json" "$kind-short-inspect.json"
  same "$kind" outputs "$kind-normal-run.json" "$kind-short-run.json"
  same "$kind" packed "$kind-normal-dump.json" "$kind-short-dump.json"
  echo "$kind: short vtables inspected, packed, verified and run as the normal program; same packed bytes"
}

check_kind conv
check_kind fp16
check_kind qd8-qc8w
check_kind llm-q4 --size 32K
check_kind ptd
