#!/usr/bin/env bash
# Parallel packing against its own ceiling on this machine, in one run: for generated LLM-like programs of
# many delegates (xpack-genmodel --delegates; no two delegates of a method share a weight), the median wall
# time of `xpack pack --jobs 1` and `--jobs 2` (same bytes, checked), and the baseline: two independent
# `xpack pack --jobs 1` processes at once (two copies of the program) against one alone. The baseline shares
# nothing inside xpack, so what it loses is what the machine loses (memory bandwidth, page-cache writes).
#
# usage: bench/parallel_pack.sh --xpack X --genmodel G --out DIR [--size 768M] [--delegates 8] [--reps 3]
#                               [--kinds llm,llm-q4]
# Writes DIR/parallel_pack.json and DIR/parallel_pack.md (a markdown table).
set -euo pipefail
XPACK=; GEN=; OUT=; SIZE=768M; DELEGATES=8; REPS=3; KINDS=llm,llm-q4
while [ $# -gt 0 ]; do
  case $1 in
    --xpack) XPACK=$2; shift 2;; --genmodel) GEN=$2; shift 2;; --out) OUT=$2; shift 2;;
    --size) SIZE=$2; shift 2;; --delegates) DELEGATES=$2; shift 2;; --reps) REPS=$2; shift 2;;
    --kinds) KINDS=$2; shift 2;;
    *) sed -n '2,11p' "$0" >&2; exit 2;;
  esac
done
[ -x "$XPACK" ] && [ -x "$GEN" ] && [ -n "$OUT" ] || { sed -n '2,11p' "$0" >&2; exit 2; }
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
work=$(mktemp -d "$OUT/work.XXXXXX"); trap 'rm -rf "$work"' EXIT

# Wall seconds of "$@" (outputs removed first: every run writes a new file).
timed() {
  local t0 t1; rm -f "$work"/*.xpc; t0=$(date +%s%N); "$@"; t1=$(date +%s%N)
  printf '%d.%09d\n' $(((t1 - t0) / 1000000000)) $(((t1 - t0) % 1000000000))
}

rows=()
for kind in ${KINDS//,/ }; do
  echo "== $kind $SIZE, $DELEGATES delegates per method" >&2
  "$GEN" "$kind" --size "$SIZE" --delegates "$DELEGATES" -o "$work/a.pte" > /dev/null
  cp "$work/a.pte" "$work/b.pte"
  j1=(); j2=(); one=(); two=()
  for r in $(seq "$REPS"); do  # interleaved, so a change of machine load hits every variant alike
    j1+=("$(timed "$XPACK" pack "$work/a.pte" -o "$work/j1.xpc" --jobs 1 -q)")
    cp "$work/j1.xpc" "$work/ref.xpc.keep"
    j2+=("$(timed "$XPACK" pack "$work/a.pte" -o "$work/j2.xpc" --jobs 2 -q)")
    cmp -s "$work/ref.xpc.keep" "$work/j2.xpc" || { echo "--jobs 2 wrote other bytes than --jobs 1" >&2; exit 1; }
    one+=("$(timed "$XPACK" pack "$work/b.pte" -o "$work/b.xpc" --jobs 1 -q)")
    two+=("$(timed bash -c "'$XPACK' pack '$work/a.pte' -o '$work/a.xpc' --jobs 1 -q & \
                            '$XPACK' pack '$work/b.pte' -o '$work/b.xpc' --jobs 1 -q & wait")")
  done
  rm -f "$work"/*.pte "$work/ref.xpc.keep"
  rows+=("$(python3 - "$kind" "$SIZE" "$DELEGATES" "${j1[*]}" "${j2[*]}" "${one[*]}" "${two[*]}" <<'PY'
import json, statistics, sys
kind, size, delegates = sys.argv[1], sys.argv[2], int(sys.argv[3])
j1, j2, one, two = ([float(x) for x in a.split()] for a in sys.argv[4:8])
m = statistics.median
print(json.dumps({"kind": kind, "size": size, "delegates_per_method": delegates, "reps": len(j1),
                  "jobs1_s": m(j1), "jobs2_s": m(j2), "speedup_jobs2": m(j1) / m(j2),
                  "one_process_s": m(one), "two_processes_s": m(two),
                  "two_process_throughput": 2 * m(one) / m(two), "same_bytes": True}))
PY
)")
done
printf '%s\n' "${rows[@]}" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip()]
json.dump(rows, open(sys.argv[1], "w"), indent=1)
with open(sys.argv[2], "w") as md:
    md.write("| program | --jobs 1 s | --jobs 2 s | speed-up | baseline: 1 process s | 2 processes at once s | "
             "machine throughput with 2 |\n|---|---|---|---|---|---|---|\n")
    for r in rows:
        md.write("| %s %s, %d delegates/method | %.2f | %.2f | %.2fx | %.2f | %.2f | %.2fx |\n" % (
            r["kind"], r["size"], r["delegates_per_method"], r["jobs1_s"], r["jobs2_s"], r["speedup_jobs2"],
            r["one_process_s"], r["two_processes_s"], r["two_process_throughput"]))
' "$OUT/parallel_pack.json" "$OUT/parallel_pack.md"
cat "$OUT/parallel_pack.md"
