#!/usr/bin/env bash
# The corruption matrix (tests/core/corruption_matrix.sh) on caches packed from ExecuTorch programs:
#   corruption_model.sh generated XPACK FLIPBYTE XPACK-GENMODEL   an LLM-like program, weights in a .ptd
#   corruption_model.sh real XPACK FLIPBYTE REAL_TESTDATA_DIR [MODELS]   default "stress_mlp img_enc_fp32"
# The workload is `xpack run MODEL --cache DAMAGED --json`; its per-delegate output hashes must equal
# those of the run without a cache whenever it completes.
MODE=$1; XPACK=$2; FLIP=$3; SRC=$4
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../core/corruption_matrix.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT

# The output hashes of every delegate, in order, and the failure count: what a cache must not change.
output_hashes() { grep -o '"output_xxh3":\[[^]]*\]\|"failed":[0-9]*' "$1"; }

# matrix_on LABEL RUN_EVERY MODEL [--data PTD]: packs, runs without a cache, then the matrix.
matrix_on() {
  local label=$1 every=$2; shift 2
  MODEL=("$@")
  "$XPACK" pack "${MODEL[@]}" -o "$d/$label.xpc" > /dev/null || fail "$label: pack"
  "$XPACK" run "${MODEL[@]}" --json > "$d/$label.nocache.json" || fail "$label: run without a cache"
  "$XPACK" run "${MODEL[@]}" --cache "$d/$label.xpc" --json > "$d/$label.cache.json" || fail "$label: run with the cache"
  compare_runs "$d/$label.nocache.json" "$d/$label.cache.json"
  EXPECTED=$(output_hashes "$d/$label.nocache.json")
  [[ "$EXPECTED" == *'"failed":0'* && "$EXPECTED" == *'"output_xxh3":["'* ]] || fail "$label: no outputs to compare"
  matrix_run "$d/$label.xpc" "$d" "$label" "$every"
}
cache_run() { "$XPACK" run "${MODEL[@]}" --cache "$1" --json > "$2"; }
outputs_match() { [ "$(output_hashes "$1")" = "$EXPECTED" ]; }

case "$MODE" in
  generated)
    "$SRC" llm -o "$d/llm.pte" --ptd "$d/llm.ptd" --size 1M > /dev/null
    matrix_on llm-ptd 1 "$d/llm.pte" --data "$d/llm.ptd"
    ;;
  real)
    [ -d "$SRC" ] || { echo "SKIP: $SRC is absent (real ExecuTorch files are read in place from ../shared/testdata/real)"; exit 77; }
    for model in ${5:-stress_mlp img_enc_fp32}; do
      # img_enc_fp32 takes ~0.2 s per run: the workload runs on every 16th damaged file that opens.
      every=1; [ "$model" = img_enc_fp32 ] && every=16
      matrix_on "$model" "$every" "$SRC/$model.pte"
    done
    ;;
  *) fail "usage: corruption_model.sh generated|real XPACK FLIPBYTE SOURCE [MODELS]" ;;
esac
echo "corruption_model $MODE: ok"
