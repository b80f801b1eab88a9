#!/usr/bin/env bash
# Eight processes open the same cache and run at once, mapping it (the default) and reading it (--read):
# every process gets outputs identical to the run without a cache, every look-up hits, and the cache file
# is unchanged afterwards (SHA-256, size, inode, modification time). On a generated LLM-like program
# and, when ../shared/testdata/real is present, on stress_mlp.pte.
#   concurrent_runs.sh XPACK XPACK-GENMODEL REAL_TESTDATA_DIR
XPACK=$1; GEN=$2; REAL=$3
N=8
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

runs=0
# concurrent LABEL MODEL...: packs, runs once without a cache, then N at once with it, twice.
concurrent() {
  local label=$1; shift
  "$XPACK" pack "$@" -o "$label.xpc" > /dev/null
  "$XPACK" run "$@" --json > "$label.nocache.json"
  local sum_before stat_before
  sum_before=$(sha256sum < "$label.xpc")
  stat_before=$(stat -c '%s %i %y' "$label.xpc")
  for mode in map read; do
    local flag=() pids=() i
    [ "$mode" = read ] && flag=(--read)
    rm -f go
    for i in $(seq 1 $N); do
      (while [ ! -e go ]; do sleep 0.002; done; exec "$XPACK" run "$@" --cache "$label.xpc" "${flag[@]}" --json) \
        > "$label.$mode.$i.json" 2> "$label.$mode.$i.err" &
      pids+=($!)
    done
    touch go
    for i in $(seq 1 $N); do
      wait "${pids[$((i - 1))]}" || fail "$label $mode: process $i failed: $(cat "$label.$mode.$i.err")"
      compare_runs "$label.nocache.json" "$label.$mode.$i.json" > /dev/null || fail "$label $mode: process $i"
      runs=$((runs + 1))
    done
    echo "  $label: $N processes at once ($mode): outputs identical to the run without a cache, every look-up hit"
  done
  [ "$(sha256sum < "$label.xpc")" = "$sum_before" ] || fail "$label: the cache's bytes changed"
  [ "$(stat -c '%s %i %y' "$label.xpc")" = "$stat_before" ] || fail "$label: size, inode or mtime changed"
  python3 - "$label.map.1.json" "$label" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"  {sys.argv[2]}: {d['delegates']} delegates, {d['lookups']} look-ups per process; the file is unchanged")
PY
}

"$GEN" llm -o llm.pte --size 64M > /dev/null
concurrent llm llm.pte
if [ -d "$REAL" ]; then concurrent stress_mlp "$REAL/stress_mlp.pte"
else echo "  stress_mlp: not run ($REAL is absent)"; fi
echo "concurrent_runs: $runs runs compared, all identical; ok"
