#!/usr/bin/env bash
# The transport form of every real XNNPACK program's cache: pack --zstd (default level), verify decodes
# every frame, inflate gives back exactly the plain pack, and that file serves XNNPACK with bit-identical
# outputs; run --cache on the transport form exits 3 naming inflate.
XPACK=$1; REAL=$2
. "$(dirname "$0")/../model/lib.sh"
[ -d "$REAL" ] || { echo "SKIP: $REAL is absent (real ExecuTorch files are read in place from ../shared/testdata/real)"; exit 77; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT

for f in linear129 small_cnn person_detect_fp32 person_detect_int8 stress_mlp img_enc_fp32 img_dec_small_q8 conv qint8_linear; do
  "$XPACK" pack "$REAL/$f.pte" -o "$d/$f.xpc" > /dev/null || fail "$f: pack"
  "$XPACK" pack "$REAL/$f.pte" -o "$d/$f.z.xpc" --zstd > /dev/null || fail "$f: pack --zstd"
  "$XPACK" verify "$d/$f.z.xpc" > "$d/v.txt" || fail "$f: verify of the transport form: $(cat "$d/v.txt")"
  "$XPACK" -q inflate "$d/$f.z.xpc" "$d/$f.back.xpc" || fail "$f: inflate"
  cmp "$d/$f.back.xpc" "$d/$f.xpc" || fail "$f: inflate(pack --zstd) differs from pack"
  "$XPACK" run "$REAL/$f.pte" --json > "$d/n.json" || fail "$f: run"
  "$XPACK" run "$REAL/$f.pte" --cache "$d/$f.back.xpc" --json > "$d/c.json" || fail "$f: run --cache (inflated)"
  compare_runs "$d/n.json" "$d/c.json" > /dev/null || fail "$f: outputs with the inflated cache"
  set +e; "$XPACK" run "$REAL/$f.pte" --cache "$d/$f.z.xpc" > /dev/null 2> "$d/err.txt"; st=$?; set -e
  [ "$st" = 3 ] || fail "$f: run --cache on the transport form: exit $st"
  grep -q "xpack inflate" "$d/err.txt" || fail "$f: message does not name xpack inflate: $(cat "$d/err.txt")"
  echo "  $f: $(stat -c %s "$d/$f.xpc") -> $(stat -c %s "$d/$f.z.xpc") bytes, inflated identical, outputs identical"
done
echo "transport real files: ok"
