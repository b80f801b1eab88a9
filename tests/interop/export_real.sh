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
  n=$((n + 1))
done
python3 "$here/read_xpwc.py" selftest stress_mlp.xpwc || fail "the reader accepted a damaged file"
echo "real files: $n caches exported and compared: ok"
