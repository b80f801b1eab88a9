#!/usr/bin/env bash
# A named key in both the program's named_data and a .ptd: stock ExecuTorch (et_harness, the real runtime) takes
# the .ptd's bytes (its MergedDataMap asks the external map first, and its duplicate check cannot see the
# program's keys), and xpack packs what it runs. xpack once refused such a pair as malformed. An LLM-like program
# with its weights in named_data under module-path keys (layers.0.q.weight, ...), and a .ptd of the same keys
# whose weights differ:
#   - ExecuTorch's outputs with the .ptd differ from those without it (the .ptd's bytes are what it reads);
#   - xpack packs the pair, and ExecuTorch serves xpack's export of it in full, with the outputs it computes
#     without any cache.
# Under content keys (the SHA-256 of the bytes) the same pair is refused by pack, naming both files: one of the two
# copies is not what its key names, and the program run without the .ptd would be served the .ptd's packing.
# Environment as et_serve.sh (XPACK, XPACK_GENMODEL, XNNPACK_PREFIX, XPACK_ET_VERSION). Exit 0/1/77.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${XPACK:?}" "${XPACK_GENMODEL:?}"
fail() { echo "FAIL: $*"; exit 1; }
source "$here/env.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/et_both.XXXXXX")
trap 'rm -rf "$work"' EXIT
field() { sed -n "s/^total .*\b$2=\([0-9]*\).*/\1/p" "$1"; }
outputs() { grep '^output' "$1"; }
H() { "$ET_HARNESS" "$work/in_pte.pte" --input-scale 0.1 "$@"; }

# make_pair PREFIX [GENMODEL OPTION...]: PREFIX_pte.pte (weights in named_data), PREFIX_same.ptd (the same keys and
# bytes) and PREFIX_other.ptd (the same keys, other weights: every 16th byte of the last half, its segments, changed).
make_pair() {
  local prefix=$1; shift
  "$XPACK_GENMODEL" llm --size 256K --seed 1 "$@" -o "$work/${prefix}_pte.pte" > /dev/null || fail "genmodel $prefix"
  "$XPACK_GENMODEL" llm --size 256K --seed 1 "$@" --ptd "$work/${prefix}_same.ptd" -o "$work/${prefix}_with_ptd.pte" \
    > /dev/null || fail "genmodel $prefix (.ptd)"
  python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[len(d) // 2::16] = bytes(b ^ 1 for b in d[len(d) // 2::16]); open(sys.argv[2], "wb").write(d)' \
    "$work/${prefix}_same.ptd" "$work/${prefix}_other.ptd" || fail "editing the .ptd"
}
make_pair n --name-keys
cp "$work/n_pte.pte" "$work/in_pte.pte"
cp "$work/n_other.ptd" "$work/other.ptd"

H --no-weight-cache > "$work/plain.txt" 2> "$work/plain.err" || { cat "$work/plain.err"; fail "ExecuTorch, the program alone"; }
H --data "$work/other.ptd" --no-weight-cache > "$work/base.txt" 2> "$work/base.err" ||
  { cat "$work/base.err"; fail "ExecuTorch, the program and the .ptd"; }
[ -n "$(outputs "$work/base.txt")" ] || fail "no outputs"
if diff <(outputs "$work/plain.txt") <(outputs "$work/base.txt") > /dev/null; then
  fail "ExecuTorch's outputs are the same with and without the .ptd: the test shows nothing"
fi
echo "ExecuTorch reads the .ptd's bytes of a key in both: its outputs change with the .ptd"

"$XPACK" pack "$work/in_pte.pte" --data "$work/other.ptd" -o "$work/both.xpc" > "$work/pack.txt" 2>&1 ||
  { cat "$work/pack.txt"; fail "xpack pack of the pair"; }
"$XPACK" export --executorch "$work/both.xpc" "$work/both.packed" > /dev/null 2>&1 || fail "export"
H --data "$work/other.ptd" --cache-file "$work/both.packed" > "$work/served.txt" 2> "$work/served.err" ||
  { cat "$work/served.err"; fail "ExecuTorch with xpack's export"; }
lookups=$(field "$work/served.txt" lookups) from_file=$(field "$work/served.txt" from_file)
[ -n "$lookups" ] && [ "$lookups" -gt 0 ] && [ "$from_file" = "$lookups" ] ||
  fail "xpack's export of the pair not served in full: $from_file of $lookups look-ups from the file"
diff <(outputs "$work/served.txt") <(outputs "$work/base.txt") > /dev/null ||
  fail "outputs with xpack's export differ from ExecuTorch's without a cache"
echo "PASS: xpack packs the .ptd's bytes; $from_file of $lookups look-ups served, outputs identical"

# Content keys: the same edit under keys that name the bytes.
make_pair c
"$XPACK" pack "$work/c_pte.pte" --data "$work/c_same.ptd" -o "$work/c_same.xpc" > /dev/null 2>&1 ||
  fail "pack of a program and a .ptd holding the same bytes under the same content keys"
"$XPACK" pack "$work/c_pte.pte" --data "$work/c_other.ptd" -o "$work/c_other.xpc" > /dev/null 2> "$work/c.err"; st=$?
[ "$st" = 3 ] && grep -q "c_pte.pte: named_data key [0-9a-f]* holds .* bytes that differ from the .* bytes .*c_other.ptd holds" "$work/c.err" &&
  [ ! -e "$work/c_other.xpc" ] || fail "content keys over other bytes in the .ptd: pack exit $st: $(head -c 300 "$work/c.err")"
echo "PASS: under content keys the pair is refused: $(head -c 160 "$work/c.err")"
