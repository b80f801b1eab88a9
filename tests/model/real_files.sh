#!/usr/bin/env bash
# Every XNNPACK file of the real test data packs; run --cache hits with zero misses and bit-identical outputs;
# controls say "nothing to pack"; bad files exit 3; damaged copies never crash.
XPACK=$1; REAL=$2; DEPTHWISE_PACKS=${3:-0} # 1: this XNNPACK offers depthwise weights to a weights cache
. "$(dirname "$0")/lib.sh"
[ -d "$REAL" ] || { echo "SKIP: $REAL is absent (real ExecuTorch files are read in place from ../shared/testdata/real)"; exit 77; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT

packing="linear129 small_cnn person_detect_fp32 person_detect_int8 stress_mlp img_enc_fp32 img_dec_small_q8 conv qint8_linear"
nothing="add clamp dynamic_mul dwconv_inblob_2024"
if [ "$DEPTHWISE_PACKS" = 1 ]; then packing="$packing dwconv_inblob_2024"; nothing="add clamp dynamic_mul"; fi
for f in $packing; do
  echo "== $f"
  "$XPACK" pack "$REAL/$f.pte" -o "$d/$f.xpc" || fail "$f: pack"
  "$XPACK" verify "$d/$f.xpc" > /dev/null || fail "$f: verify"
  "$XPACK" run "$REAL/$f.pte" --json > "$d/n.json" || fail "$f: run"
  "$XPACK" run "$REAL/$f.pte" --cache "$d/$f.xpc" --json > "$d/c.json" || fail "$f: run --cache"
  compare_runs "$d/n.json" "$d/c.json" || fail "$f: cache run"
  "$XPACK" verify "$d/$f.xpc" --model "$REAL/$f.pte" --json > "$d/v.json" || fail "$f: verify --model"
  verify_model_covers "$d/v.json" "$d/$f.xpc" || fail "$f: verify --model coverage"
done
# verify --model names what differs: a cache of another model lacks this model's weights.
set +e; "$XPACK" verify "$d/linear129.xpc" --model "$REAL/small_cnn.pte" > "$d/v.txt" 2>&1; st=$?; set -e
[ "$st" = 1 ] || fail "verify --model with the wrong model: exit $st"
grep -q "the cache has no sound entry" "$d/v.txt" || fail "verify --model message: $(cat "$d/v.txt")"
grep -q "with the models: 0 of [1-9][0-9]* packed weights as this machine packs them; not run with the cache" "$d/v.txt" ||
  fail "verify --model with the wrong model does not say what it covered: $(cat "$d/v.txt")"
# XNNPACK delegates whose weights XNNPACK never packs (elementwise ops; depthwise only, with an XNNPACK that
# never offers depthwise weights to a cache): nothing to pack.
for f in $nothing; do
  out=$("$XPACK" pack "$REAL/$f.pte" -o "$d/$f.xpc") || fail "$f: pack exit"
  echo "$out" | grep -q "nothing to pack" || fail "$f: expected nothing to pack, got: $out"
  [ ! -e "$d/$f.xpc" ] || fail "$f: wrote a file with nothing in it"
done
# Controls: no XNNPACK delegate. The one with another backend's delegate says on stderr which delegate it
# skipped; the others, which have no delegate at all, have nothing to say.
for f in openvino_tiny portable_linear portable_multi_method legacy_constant_buffer portable_xor; do
  out=$("$XPACK" pack "$REAL/$f.pte" -o "$d/$f.xpc" 2> "$d/err.txt") || fail "$f: exit"
  echo "$out" | grep -q "nothing to pack" || fail "$f: $out"
  if [ "$f" = openvino_tiny ]; then
    grep -q "openvino_tiny.pte: method 'forward' delegate 0: backend OpenvinoBackend is not XNNPACK, skipped" \
      "$d/err.txt" || fail "$f: no note naming the skipped OpenVINO delegate: $(cat "$d/err.txt")"
  elif grep -q "not XNNPACK" "$d/err.txt"; then
    fail "$f: a note about a delegate it does not have: $(cat "$d/err.txt")"
  fi
done
out=$("$XPACK" pack "$REAL/orphan_xnnpack_weights.ptd" -o "$d/x.xpc" 2>&1) || fail ".ptd-only exit"
echo "$out" | grep -q "nothing to pack" || fail ".ptd-only: $out"
# Bad input: exit 3 with a message naming the file.
for f in bad_corrupt bad_zip_named_pte; do
  set +e; "$XPACK" pack "$REAL/$f.pte" -o "$d/x.xpc" 2> "$d/err.txt"; st=$?; set -e
  [ "$st" = 3 ] || fail "$f: exit $st"
  grep -q "$f.pte" "$d/err.txt" || fail "$f: message does not name the file: $(cat "$d/err.txt")"
  [ ! -e "$d/x.xpc" ] || fail "$f: output written"
done
# Truncated and bit-flipped copies of real files: exit 0 or 3, never a crash, never a partial output.
crashes=0; n=0
for f in linear129 small_cnn person_detect_int8 img_dec_small_q8; do
  size=$(stat -c %s "$REAL/$f.pte")
  for len in 0 7 8 16 40 100 $((size / 3)) $((size / 2)) $((size - 1)); do
    head -c "$len" "$REAL/$f.pte" > "$d/t.pte"
    st=$(status_of "$XPACK" pack "$d/t.pte" -o "$d/t.xpc"); n=$((n + 1))
    [ "$st" -lt 128 ] || { echo "CRASH: $f truncated to $len"; crashes=$((crashes + 1)); }
    case "$st" in 0|3) ;; *) fail "$f truncated to $len: exit $st";; esac
  done
  for i in $(seq 1 40); do
    cp "$REAL/$f.pte" "$d/t.pte"
    off=$(( (i * 7919 * 31) % size ))
    printf "$(printf '\\x%02x' $(( (i * 37) % 255 + 1 )))" | dd of="$d/t.pte" bs=1 seek="$off" conv=notrunc status=none
    st=$(status_of "$XPACK" pack "$d/t.pte" -o "$d/t.xpc"); n=$((n + 1))
    [ "$st" -lt 128 ] || { echo "CRASH: $f byte $off"; crashes=$((crashes + 1)); }
    st=$(status_of "$XPACK" run "$d/t.pte"); n=$((n + 1))
    [ "$st" -lt 128 ] || { echo "CRASH: run $f byte $off"; crashes=$((crashes + 1)); }
  done
done
[ -z "$(find "$d" -name '.xpack-*')" ] || fail "temporary files left behind"
echo "damaged copies: $n runs, $crashes crashes"
[ "$crashes" = 0 ] || fail "crashes"
echo "real files: ok"
