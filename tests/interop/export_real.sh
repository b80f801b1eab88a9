#!/usr/bin/env bash
# xpack export --executorch on caches packed from the real ExecuTorch files: read back and compared, then
# served by an emulation of ExecuTorch's weights cache (xpwc-run): XNNPACK packs nothing, outputs identical.
XPACK=$1; REAL=$2; XPWC_RUN=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../model/lib.sh"
[ -d "$REAL" ] || { echo "SKIP: $REAL is absent (real ExecuTorch files are read in place from ../shared/testdata/real)"; exit 77; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
n=0
for f in linear129 small_cnn person_detect_fp32 person_detect_int8 stress_mlp img_enc_fp32 img_dec_small_q8 conv qint8_linear; do
  [ -e "$REAL/$f.pte" ] || fail "$REAL/$f.pte is missing"
  "$XPACK" pack "$REAL/$f.pte" -o $f.xpc > /dev/null || fail "$f: pack"
  "$XPACK" dump --json $f.xpc > $f.dump.json
  "$XPACK" export --executorch $f.xpc $f.xpwc --json > $f.export.json 2> $f.err || fail "$f: export: $(cat $f.err)"
  python3 "$here/read_xpwc.py" compare --xpwc $f.xpwc --xpc $f.xpc --dump $f.dump.json --export $f.export.json \
    || fail "$f: the export does not match the cache"
  "$XPWC_RUN" "$REAL/$f.pte" --xpwc $f.xpwc || fail "$f: ExecuTorch-like run"
  # An export under 128 KiB of packed weights is said to likely slow stock ExecuTorch's load down, in JSON and text.
  small=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
    assert d['likely_slower_than_packing'] == (d['data_bytes'] < 128 * 1024), d; print(int(d['data_bytes'] < 128 * 1024))" \
    $f.export.json) || fail "$f: likely_slower_than_packing does not follow the export's size"
  "$XPACK" export --executorch $f.xpc $f.again.xpwc > /dev/null 2> $f.text.err || fail "$f: export (text)"
  if grep -q "^note: .*likely load the program slower" $f.text.err; then noted=1; else noted=0; fi
  [ "$noted" = "$small" ] || fail "$f: note on a small export printed: $noted, expected: $small"
  cmp -s $f.xpwc $f.again.xpwc || fail "$f: the same export twice differs"
  n=$((n + 1))
done
python3 "$here/read_xpwc.py" selftest stress_mlp.xpwc || fail "the reader accepted a damaged file"
echo "real files: $n caches exported and compared: ok"
