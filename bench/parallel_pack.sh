#!/usr/bin/env bash
# Parallel packing against its own ceiling on this machine, in one run: for generated LLM-like programs of
# many delegates (xpack-genmodel --delegates; no two delegates of a method share a weight), the median wall
# time of `xpack pack --jobs 1` and `--jobs 2` (same bytes, checked), and the baseline: two independent
# `xpack pack --jobs 1` processes at once (two copies of the program) against one alone. The baseline shares
# nothing inside xpack, so what it loses is what the machine loses (memory bandwidth, page-cache writes).
# Each is measured twice: with the caches written to disk (beside DIR), and to memory (a tmpfs, /dev/shm),
# which leaves out the disk's write speed and shows how packing itself scales. The programs stay on disk.
#
# usage: bench/parallel_pack.sh --xpack X --genmodel G --out DIR [--size 768M] [--delegates 8] [--reps 3]
#                               [--kinds llm,llm-q4] [--outputs disk,memory]
# Writes DIR/parallel_pack.json and DIR/parallel_pack.md (a markdown table).
set -euo pipefail
XPACK=; GEN=; OUT=; SIZE=768M; DELEGATES=8; REPS=3; KINDS=llm,llm-q4; OUTPUTS=disk,memory
while [ $# -gt 0 ]; do
  case $1 in
    --xpack) XPACK=$2; shift 2;; --genmodel) GEN=$2; shift 2;; --out) OUT=$2; shift 2;;
    --size) SIZE=$2; shift 2;; --delegates) DELEGATES=$2; shift 2;; --reps) REPS=$2; shift 2;;
    --kinds) KINDS=$2; shift 2;; --outputs) OUTPUTS=$2; shift 2;;
    *) sed -n '2,13p' "$0" >&2; exit 2;;
  esac
done
[ -x "$XPACK" ] && [ -x "$GEN" ] && [ -n "$OUT" ] || { sed -n '2,13p' "$0" >&2; exit 2; }
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
inputs=$(mktemp -d "$OUT/work.XXXXXX"); disk=$(mktemp -d "$OUT/work.XXXXXX"); memory=
if [[ ,$OUTPUTS, == *,memory,* ]]; then
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then memory=$(mktemp -d /dev/shm/xpack-parallel.XXXXXX)
  else echo "note: no writable /dev/shm: caches written to disk only" >&2; OUTPUTS=disk; fi
fi
trap 'rm -rf "$inputs" "$disk" ${memory:+"$memory"}' EXIT

# Wall seconds of "$@" after removing the output(s) named first (every run writes a new file) and a sync, so
# no run pays for write-back left by the one before.
timed() {
  local t0 t1; rm -f $1; shift; sync; t0=$(date +%s%N); "$@"; t1=$(date +%s%N)
  printf '%d.%09d\n' $(((t1 - t0) / 1000000000)) $(((t1 - t0) % 1000000000))
}

rows=()
for kind in ${KINDS//,/ }; do
  "$GEN" "$kind" --size "$SIZE" --delegates "$DELEGATES" -o "$inputs/a.pte" > /dev/null
  cp "$inputs/a.pte" "$inputs/b.pte"
  for where in ${OUTPUTS//,/ }; do
    echo "== $kind $SIZE, $DELEGATES delegates per method, caches written to $where" >&2
    if [ "$where" = memory ]; then work=$memory; else work=$disk; fi
    a=$inputs/a.pte b=$inputs/b.pte
    j1=(); j2=(); one=(); two=()
    for r in $(seq "$REPS"); do  # interleaved, so a change of machine load hits every variant alike
      j1+=("$(timed "$work/j1.xpc" "$XPACK" pack "$a" -o "$work/j1.xpc" --jobs 1 -q)")
      j2+=("$(timed "$work/j2.xpc" "$XPACK" pack "$a" -o "$work/j2.xpc" --jobs 2 -q)")
      cmp -s "$work/j1.xpc" "$work/j2.xpc" || { echo "--jobs 2 wrote other bytes than --jobs 1" >&2; exit 1; }
      rm -f "$work/j1.xpc" "$work/j2.xpc"
      one+=("$(timed "$work/b.xpc" "$XPACK" pack "$b" -o "$work/b.xpc" --jobs 1 -q)")
      two+=("$(timed "$work/a.xpc $work/b.xpc" bash -c "'$XPACK' pack '$a' -o '$work/a.xpc' --jobs 1 -q & \
                              '$XPACK' pack '$b' -o '$work/b.xpc' --jobs 1 -q & wait")")
    done
    rm -f "$work"/*.xpc
    rows+=("$(python3 - "$kind" "$SIZE" "$DELEGATES" "$where" "${j1[*]}" "${j2[*]}" "${one[*]}" "${two[*]}" <<'PY'
import json, statistics, sys
kind, size, delegates, where = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
j1, j2, one, two = ([float(x) for x in a.split()] for a in sys.argv[5:9])
m = statistics.median
print(json.dumps({"kind": kind, "size": size, "delegates_per_method": delegates, "outputs": where,
                  "reps": len(j1), "jobs1_s": m(j1), "jobs2_s": m(j2), "speedup_jobs2": m(j1) / m(j2),
                  "one_process_s": m(one), "two_processes_s": m(two),
                  "two_process_throughput": 2 * m(one) / m(two), "same_bytes": True}))
PY
)")
  done
  rm -f "$inputs"/*.pte
done
printf '%s\n' "${rows[@]}" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip()]
json.dump(rows, open(sys.argv[1], "w"), indent=1)
with open(sys.argv[2], "w") as md:
    md.write("| program | caches written to | --jobs 1 s | --jobs 2 s | speed-up | baseline: 1 process s | "
             "2 processes at once s | machine throughput with 2 |\n|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        md.write("| %s %s, %d delegates/method | %s | %.2f | %.2f | %.2fx | %.2f | %.2f | %.2fx |\n" % (
            r["kind"], r["size"], r["delegates_per_method"], r["outputs"], r["jobs1_s"], r["jobs2_s"],
            r["speedup_jobs2"], r["one_process_s"], r["two_processes_s"], r["two_process_throughput"]))
' "$OUT/parallel_pack.json" "$OUT/parallel_pack.md"
cat "$OUT/parallel_pack.md"
