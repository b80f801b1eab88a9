#!/usr/bin/env bash
# A region whose recorded size lies (issue 16): the region is made the last XNNPACK-alignment bytes of the
# data area and every checksum re-sealed (tests/core/xpc_tamper region-at-end), so a hit would make XNNPACK
# read the weight's real size from there: past the region, past the file, past the mapping (once a SIGSEGV
# in `run --cache`, `run --cache --read` and the bench's ideal child, wrong outputs otherwise). The loader now
# serves a region only when it holds exactly the bytes XNNPACK reads for the key, asked of XNNPACK
# (xpack_replay_size_weights). For every generated kind and every XNNPACK real file, the first, middle and
# last regions in turn:
#   - `xpack run --cache` (mapped and --read) exits 0 with the outputs of a run without a cache, that entry
#     refused (refused_size; refused_mismatch for weights XNNPACK packs before asking, whose fresh bytes the
#     loader compares), every other look-up still a hit, no key left unsized;
#   - `xpack bench` (the ideal variant and the warm cache variant) runs without a crash, outputs identical.
#   lying_sizes.sh XPACK TAMPER GENMODEL [REAL_DIR]
XPACK=$1; TAMPER=$2; GEN=$3; REAL=${4:-}
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT


programs=0; regions_tried=0
try_program() { # name pte [--data ptd]
  local name=$1 pte=$2; shift 2
  rm -f "$d/$name.xpc"
  "$XPACK" pack "$pte" "$@" -o "$d/$name.xpc" > /dev/null 2>&1
  [ -f "$d/$name.xpc" ] || { echo "$name: nothing packed"; return; }
  "$XPACK" run "$pte" "$@" --json > "$d/none.json" || fail "$name: run without a cache"
  "$XPACK" run "$pte" "$@" --cache "$d/$name.xpc" --json > "$d/good.json" || fail "$name: run with the cache"
  local lookups hits
  lookups=$(json_value "$d/good.json" lookups); hits=$(json_value "$d/good.json" hits)
  [ "$hits" = "$lookups" ] && [ "$(json_value "$d/good.json" refused_unsized)" = 0 ] ||
    fail "$name: the sound cache does not hit in full ($hits of $lookups, $(json_value "$d/good.json" refused_unsized) unsized)"
  [ "$(run_output_hashes "$d/good.json")" = "$(run_output_hashes "$d/none.json")" ] || fail "$name: sound cache: other outputs"
  local count alignment
  count=$("$XPACK" dump --json "$d/$name.xpc" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["regions"]))')
  alignment=$("$XPACK" dump --json "$d/$name.xpc" | python3 -c 'import json,sys; print(json.load(sys.stdin)["xnn_alignment"])')
  local i tried=0
  for i in $(printf '%s\n' 0 $((count / 2)) $((count - 1)) | sort -nu); do
    cp "$d/$name.xpc" "$d/lie.xpc"
    "$TAMPER" "$d/lie.xpc" region-at-end "$i" > /dev/null 2>&1 || continue # a region of one alignment unit cannot lie smaller
    for mode in "" --read; do
      set +e; "$XPACK" run "$pte" "$@" --cache "$d/lie.xpc" $mode --json > "$d/lie.json" 2> "$d/lie.err"; local st=$?; set -e
      [ "$st" = 0 ] || fail "$name: region $i lies ($mode): run exit $st: $(head -c 300 "$d/lie.err")"
      [ "$(run_output_hashes "$d/lie.json")" = "$(run_output_hashes "$d/none.json")" ] || fail "$name: region $i lies ($mode): other outputs"
      local refused
      refused=$(( $(json_value "$d/lie.json" refused_size) + $(json_value "$d/lie.json" refused_mismatch) ))
      [ "$refused" -ge 1 ] || fail "$name: region $i lies ($mode): served (refused_size + refused_mismatch $refused)"
      [ "$(json_value "$d/lie.json" misses)" = "$refused" ] && [ "$(json_value "$d/lie.json" hits)" -gt 0 -o "$count" = 1 ] ||
        fail "$name: region $i lies ($mode): $(json_value "$d/lie.json" misses) misses, expected only the $refused refused"
    done
    tried=$((tried + 1))
  done
  [ "$tried" -gt 0 ] || { echo "$name: every region is one alignment unit ($alignment bytes)"; return; }
  # The bench's children, the ideal one included, size the weights too: the last region made to lie.
  set +e; "$XPACK" bench "$pte" "$@" --cache "$d/lie.xpc" --reps 1 --variants ideal,cache_warm --serve-small --json > "$d/bench.json" 2> "$d/bench.err"; st=$?; set -e
  [ "$st" = 0 ] || fail "$name: bench with a lying region: exit $st: $(head -c 300 "$d/bench.err")"
  [ "$(json_value "$d/bench.json" outputs_identical)" = True ] || fail "$name: bench with a lying region: outputs differ"
  echo "$name: $tried of $count regions made to lie: each refused, outputs identical, bench ran"
  programs=$((programs + 1)); regions_tried=$((regions_tried + tried))
}

for kind in llm llm-q4 qd8-qc8w fp16 deconv ptd conv; do
  if [ "$kind" = ptd ]; then
    "$GEN" ptd -o "$d/ptd.pte" --ptd "$d/ptd.ptd" > /dev/null
    try_program ptd "$d/ptd.pte" --data "$d/ptd.ptd"
  else
    "$GEN" "$kind" -o "$d/$kind.pte" > /dev/null
    try_program "$kind" "$d/$kind.pte"
  fi
done
if [ -n "$REAL" ] && [ -d "$REAL" ]; then
  for f in "$REAL"/*.pte; do
    case "$(basename "$f")" in bad_*) continue ;; esac
    "$XPACK" inspect "$f" > /dev/null 2>&1 || continue
    try_program "real_$(basename "$f" .pte)" "$f"
  done
else
  echo "real files: skipped (${REAL:-no directory given} is absent)"
fi
[ "$programs" -ge 5 ] || fail "only $programs programs had a region to make lie"
echo "lying_sizes: $regions_tried regions in $programs programs made to lie, each refused"
