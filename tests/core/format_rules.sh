#!/usr/bin/env bash
# Every rule of docs/FORMAT.md that no checksum covers, broken once with every checksum re-sealed
# (tests/core/xpc_tamper): `xpack verify` must report the rule naming the record, field or offset, and a run
# with the file must be refused at open or compute the outputs of the run without a cache. A transport file
# claiming alignments beyond FORMAT.md's maximum must not make inflate write anything (issue 16).
XPACK=$1; SUB=$2; TAMPER=$3; GEN=$4
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT

"$SUB" pack "$d/good.xpc" > /dev/null
"$SUB" run > "$d/nocache.txt"
EXPECTED=$(outputs "$d/nocache.txt")
"$XPACK" verify "$d/good.xpc" > /dev/null || fail "the cache to break is not sound"
read -r large gap < <("$XPACK" dump --json "$d/good.xpc" | python3 -c '
import json, sys
d = json.load(sys.stdin); page = d["page_alignment"]; end = d["data"]["offset"]; large = gap = None
for r in d["regions"]:
    if large is None and r["size"] >= page and r["offset"] - end >= 64: large = r["index"]
    if gap is None and r["offset"] > end and end > d["data"]["offset"]: gap = end
    end = r["offset"] + r["size"]
print(large, gap)')
[ "$large" != None ] && [ "$gap" != None ] || fail "the demo cache has no large region after a gap, or no gap between regions"

# check_verify_only RULE EXPECT COMMAND...: breaks RULE with COMMAND on a copy of the good cache (bad.xpc);
# verify exits 1 or 3 saying EXPECT.
check_verify_only() {
  local rule=$1 expect=$2; shift 2
  cp "$d/good.xpc" "$d/bad.xpc"
  "$@" || fail "$rule: could not break the rule"
  set +e; "$XPACK" verify "$d/bad.xpc" > "$d/verify.out" 2>&1; local st=$?; set -e
  [ "$st" = 1 ] || [ "$st" = 3 ] || fail "$rule: verify exit $st: $(head -c 300 "$d/verify.out")"
  grep -Eq "$expect" "$d/verify.out" || fail "$rule: verify does not say /$expect/: $(head -c 400 "$d/verify.out")"
}
# check_rule RULE EXPECT COMMAND...: as check_verify_only, and a run with bad.xpc is refused at open or
# computes the outputs of a run without a cache.
check_rule() {
  local rule=$1 st
  check_verify_only "$@"
  set +e; "$SUB" run --cache "$d/bad.xpc" > "$d/run.txt" 2> "$d/run.err"; st=$?; set -e
  if [ "$st" = 0 ]; then
    [ "$(outputs "$d/run.txt")" = "$EXPECTED" ] || fail "$rule: a run with the file computes other outputs"
  elif [ "$st" != 3 ]; then
    fail "$rule: run exit $st: $(head -c 300 "$d/run.err")"
  fi
  echo "format_rules: $rule: verify: $(head -n1 "$d/verify.out" | cut -c1-160); run exit $st"
}
poke() { printf '\001' | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }

check_rule "duplicate key" "^entry 1 at offset [0-9]+: same \(seed, kernel, bias\) key as entry 0" "$TAMPER" "$d/bad.xpc" dup-key
# The loader serves neither of the two (FORMAT.md 5.3), and verify's account of this machine says so (it once
# said "every entry is served" under the problem).
grep -q "2 entries of served families are refused one by one" "$d/verify.out" &&
  grep -q "on this machine 2 of [0-9]* entries would be refused" "$d/verify.out" ||
  fail "duplicate key: verify does not count the two entries refused, once: $(grep -i 'machine' "$d/verify.out")"
# An entry that names another entry's region serves that region's bytes, as a region of other bytes would: the
# loader hashes no region it serves (FORMAT.md 8), verify finds both.
check_verify_only "a region no entry names" "^region [0-9]+: no entry names this region" "$TAMPER" "$d/bad.xpc" unused-region
echo "format_rules: a region no entry names: verify: $(head -n1 "$d/verify.out" | cut -c1-160)"
check_rule "program larger than its file" "^provenance record 0 at offset [0-9]+: program_size [0-9]+ is more than the file's size" "$TAMPER" "$d/bad.xpc" prov-program-size
check_rule "program size of no program" "^provenance record 0 at offset [0-9]+: program_size and program hash must be 0" "$TAMPER" "$d/bad.xpc" prov-kind
check_rule "unknown entry flag" "^entry 0 at offset [0-9]+: flags 0x[45]: unknown bits 0x4" "$TAMPER" "$d/bad.xpc" entry-flags
# dump tells a sound entry from one a loader serves: this one's check and region hold, but no loader serves it.
"$XPACK" dump --json "$d/bad.xpc" | python3 -c '
import json, sys
e = json.load(sys.stdin)["entries"]
bad = [x for x in e if x["flags"] & 4]
assert len(bad) == 1 and bad[0]["sound"] and not bad[0]["servable"], bad
assert all(x["servable"] for x in e if not x["flags"] & 4), e' || fail "dump: an entry with unknown flags is not shown unserved"
"$XPACK" dump "$d/bad.xpc" | grep -q "NOT SERVED" || fail "dump: the text does not mark the entry no loader serves"
check_rule "family flags" "^family record 0 at offset [0-9]+: flags 0x1, expected 0" "$TAMPER" "$d/bad.xpc" family-flags
check_rule "unsorted family names" "^family record 1 at offset [0-9]+: name .* sorts before the previous" "$TAMPER" "$d/bad.xpc" family-order
check_rule "duplicate family names" "^family record 1 at offset [0-9]+: name .* is the same as the previous" "$TAMPER" "$d/bad.xpc" family-dup
check_rule "reserved header field" "^header at offset 0: the reserved u16 at offset 30 is 0x1, expected 0" "$TAMPER" "$d/bad.xpc" reserved
check_rule "byte table of 2-byte records" "table STRS record_size 2, expected 1 \\(a byte table\\)" "$TAMPER" "$d/bad.xpc" strs-record-size
check_rule "arch naming no CPU" "^header at offset 28: arch 0 \\(EM_NONE\\) names no CPU" "$TAMPER" "$d/bad.xpc" arch-none
check_rule "page_alignment other than data_offset" "header: data_offset 4096 must equal page_alignment 8192" "$TAMPER" "$d/bad.xpc" page-alignment
check_rule "alignment beyond the maximum" "header: page_alignment 2147483648 .* 4096 <= page <= 65536" "$TAMPER" "$d/bad.xpc" huge-alignment
check_rule "large region off its page" "^region $large at offset [0-9]+: size [0-9]+ .*at a multiple of 4096" "$TAMPER" "$d/bad.xpc" move-region "$large"
grep -q "1 entry of served families is refused one by one" "$d/verify.out" &&
  grep -q "on this machine 1 of [0-9]* entries would be refused" "$d/verify.out" ||
  fail "large region off its page: verify does not count its entry refused: $(grep -i 'machine' "$d/verify.out")"
check_rule "region size off the XNNPACK alignment" "^region 0 at offset 4096: size [0-9]+ .* multiple of xnn_alignment" "$TAMPER" "$d/bad.xpc" region-size 0
check_rule "padding after the header" "^padding at offset 100: .* between the header and the data area" poke "$d/bad.xpc" 100
check_rule "padding between regions" "^padding at offset $gap: .* between regions" poke "$d/bad.xpc" "$gap"
# A file of version 1.0 has no families; one that claims some anyway is served by them nowhere.
check_rule "families in a file of version 1.0" "^FAMI table at offset [0-9]+: [0-9]+ records in a file of version 1.0" "$TAMPER" "$d/bad.xpc" as-1.0
check_rule "an input without a name" "^provenance record 0 at offset [0-9]+: name is empty" "$TAMPER" "$d/bad.xpc" prov-name-empty
check_rule "a folder in an input's name" "^provenance record 0 at offset [0-9]+: name \"/.*\" holds a '/'" "$TAMPER" "$d/bad.xpc" prov-name-slash
check_rule "a zero byte inside a string" "^entry 0 at offset [0-9]+: kernel identity offset [0-9]+ is not a string of STRS: it holds a zero byte" "$TAMPER" "$d/bad.xpc" string-zero
# The identity of a weight packed in more than one way names nothing: an entry holding it is never served, and
# no writer records one (verify once called such a file sound).
check_rule "an entry keyed by xpack:ambiguous" "^entry [0-9]+ at offset [0-9]+: its kernel identity is \"xpack:ambiguous\", which names no weight" "$TAMPER" "$d/bad.xpc" ambiguous
# ... also with its key hash and order right, which a look-up follows to it: no loader can bind the identity, and
# dump says it is not served (it once said servable).
check_rule "an entry keyed by xpack:ambiguous, hashed" "^entry [0-9]+ at offset [0-9]+: its kernel identity is \"xpack:ambiguous\", which names no weight" "$TAMPER" "$d/bad.xpc" ambiguous-hashed
grep -q "key hash" "$d/verify.out" && fail "ambiguous-hashed: the key hashes were not recomputed: $(head -c 300 "$d/verify.out")"
"$XPACK" dump --json "$d/bad.xpc" | python3 -c '
import json, sys
e = json.load(sys.stdin)["entries"]
bad = [x for x in e if x["kernel"] == "xpack:ambiguous"]
assert len(bad) == 1 and bad[0]["sound"] and not bad[0]["servable"], bad
assert all(x["servable"] for x in e if x["kernel"] != "xpack:ambiguous"), e' ||
  fail "dump: an entry keyed by xpack:ambiguous is shown servable"
# Readers skip tables they do not know and find tables through the directory, so only verify tells these from
# what a writer of the file's version wrote (FORMAT.md 5.1).
check_rule "tables out of the writer's order" "^table directory entry 4 at offset [0-9]+: table INFO where BLDI comes" "$TAMPER" "$d/bad.xpc" table-order
check_rule "a table no writer of the version writes" "^table directory entry 7 at offset [0-9]+: table XTRA: a file of version 1\.3 has 7 tables" "$TAMPER" "$d/bad.xpc" extra-table
# Every table is an array of records of at least one byte, a later version's too; the message says so, not that
# the table lies outside the metadata area (it once did).
check_rule "a table of records of 0 bytes" "^[^ ]+: directory\[7\] table XTRA: record_size 0, expected at least 1" "$TAMPER" "$d/bad.xpc" extra-table-empty
grep -q "record_size 0, expected at least 1" "$d/run.err" || fail "a table of records of 0 bytes: the run does not say why: $(cat "$d/run.err")"
# Tables never overlap: a directory naming one table many times is refused at open (4,096 entries over a 4 KB
# table once made verify, export and inflate hash a 16 MB file's table 4,096 times, 19 s).
check_rule "one table named by many directory entries" "the tables of directory\[0\.\.[0-9]+\] take [0-9]+ bytes, more than the [0-9]+-byte metadata area holds" "$TAMPER" "$d/bad.xpc" alias-table 64
# A tag is the file's text: a tag "%s%s" once made the report's own format and crashed verify, export and inflate.
check_rule "a damaged table whose tag is printf's" "^table %s%s at offset [0-9]+: XXH3-64 does not match its directory entry" "$TAMPER" "$d/bad.xpc" extra-tag '%s%s'
set +e; "$XPACK" export --executorch "$d/bad.xpc" "$d/bad.et" > /dev/null 2> "$d/export.err"; st=$?; set -e
[ "$st" = 3 ] && [ ! -e "$d/bad.et" ] && grep -q "table %s%s at offset" "$d/export.err" ||
  fail "export of a file with a damaged table tagged %s%s: exit $st: $(head -c 300 "$d/export.err")"
check_rule "bytes after the table directory" "^table directory at offset [0-9]+: ends at offset [0-9]+, expected to end where the footer starts" "$TAMPER" "$d/bad.xpc" metadata-tail
# The same file refused by export and inflate (of its transport form), which check the file first.
set +e; "$XPACK" export --executorch "$d/bad.xpc" "$d/bad.et" > /dev/null 2> "$d/export.err"; st=$?; set -e
[ "$st" = 3 ] && [ ! -e "$d/bad.et" ] && grep -q "expected to end where the footer starts" "$d/export.err" ||
  fail "export of a file with bytes after its table directory: exit $st: $(head -c 300 "$d/export.err")"

# Footer fields out of range, each named for what it breaks (one message once covered them all).
check_verify_only "metadata inside the header" "footer: metadata_offset 32 lies inside the 64-byte header" "$TAMPER" "$d/bad.xpc" metadata-offset 32
check_verify_only "no table directory" "footer: table directory count 0, expected 1 to 4096" "$TAMPER" "$d/bad.xpc" dir-count 0
check_verify_only "too many tables" "footer: table directory count 5000, expected 1 to 4096" "$TAMPER" "$d/bad.xpc" dir-count 5000
# An architecture xpack has no name for is refused naming its number.
cp "$d/good.xpc" "$d/bad.xpc"; "$TAMPER" "$d/bad.xpc" arch 999
set +e; "$XPACK" verify "$d/bad.xpc" > "$d/verify.out" 2>&1; set -e
grep -q "packed for an unknown architecture (ELF machine 999)" "$d/verify.out" ||
  fail "arch 999: verify does not name it: $(head -c 400 "$d/verify.out")"
# A transport file claiming 2^31-byte alignments: refused before anything is written (inflate once laid its
# regions out 2 GiB apart, a 1 MB file becoming a 72 GiB sparse one).
"$GEN" conv -o "$d/conv.pte" > /dev/null
"$XPACK" pack --zstd "$d/conv.pte" -o "$d/good.z" > /dev/null
"$TAMPER" "$d/good.z" huge-alignment
set +e; (ulimit -f 65536; "$XPACK" inflate "$d/good.z" "$d/out.xpc") > /dev/null 2> "$d/inflate.err"; st=$?; set -e
[ "$st" = 3 ] || fail "inflate of a transport file with 2^31 alignments: exit $st: $(head -c 300 "$d/inflate.err")"
grep -q "page_alignment 2147483648" "$d/inflate.err" || fail "inflate message: $(cat "$d/inflate.err")"
[ ! -e "$d/out.xpc" ] || fail "inflate left an output"
# A transport file whose regions declare more than 1024 times its size (and more than 64 MiB) is refused at open,
# before a frame is decoded: zstd RLE blocks decode 4 bytes to 128 KiB, and a 33 KB file declaring 1 GiB had
# inflate write 1 GiB (FORMAT.md 9.2). Just under 64 MiB from a small file is still decoded (and found to lie).
"$XPACK" pack --zstd "$d/conv.pte" -o "$d/bomb.z" > /dev/null
"$TAMPER" "$d/bomb.z" region-declares $((1 << 30))
for cmd in verify inflate dump; do
  set +e
  case $cmd in
    inflate) "$XPACK" inflate "$d/bomb.z" "$d/bomb.xpc" > "$d/bomb.out" 2>&1 ;;
    *) "$XPACK" $cmd "$d/bomb.z" > "$d/bomb.out" 2>&1 ;;
  esac
  st=$?; set -e
  expected=3; [ "$cmd" = verify ] && expected=1 # verify reports it as the file's one problem
  [ "$st" = "$expected" ] && grep -q "declare .* bytes of content, past the limit of 67108864 bytes" "$d/bomb.out" ||
    fail "$cmd of a transport file declaring 1 GiB: exit $st: $(head -c 400 "$d/bomb.out")"
done
[ ! -e "$d/bomb.xpc" ] || fail "inflate of a transport file declaring 1 GiB left an output"
"$XPACK" pack --zstd "$d/conv.pte" -o "$d/bomb.z" > /dev/null
"$TAMPER" "$d/bomb.z" region-declares $(((64 << 20) - 8192))
set +e; "$XPACK" verify "$d/bomb.z" > "$d/bomb.out" 2>&1; st=$?; set -e
[ "$st" = 1 ] && grep -q "^region [0-9]* at offset [0-9]*: the zstd frame declares [0-9]* bytes of content, the region record says 67100672" "$d/bomb.out" ||
  fail "verify of a transport file declaring just under 64 MiB: exit $st: $(head -c 400 "$d/bomb.out")"
# A transport region of a size off the XNNPACK alignment is one problem: the frames after it are placed from its
# end (the data area was also reported, "the frames end at" the bad frame's start).
"$XPACK" pack --zstd "$d/conv.pte" -o "$d/good.z" > /dev/null
last=$("$XPACK" dump --json "$d/good.z" | python3 -c 'import json, sys; print(json.load(sys.stdin)["regions"][-1]["size"])')
"$TAMPER" "$d/good.z" region-declares $((last - 1))
set +e; "$XPACK" verify "$d/good.z" > "$d/verify.out" 2>&1; st=$?; set -e
[ "$st" = 1 ] && grep -q "good.z: 1 problem$" "$d/verify.out" ||
  fail "transport region of a bad size: exit $st, not one problem: $(head -c 600 "$d/verify.out")"
# verify --model stops at a re-pack that differs: the cache is not run with the model (a crafted one could
# crash XNNPACK), and the report says why.
"$XPACK" pack "$d/conv.pte" -o "$d/conv.xpc" > /dev/null
"$TAMPER" "$d/conv.xpc" region-bytes 0
set +e; "$XPACK" verify "$d/conv.xpc" --model "$d/conv.pte" > "$d/vm.out" 2>&1; st=$?; set -e
[ "$st" = 1 ] || fail "verify --model of a cache with other bytes: exit $st"
grep -q "packed bytes differ" "$d/vm.out" || fail "verify --model does not name the entry: $(cat "$d/vm.out")"
grep -q "not run with the model: the cache differs from what this machine packs" "$d/vm.out" ||
  fail "verify --model does not say it skipped the run: $(cat "$d/vm.out")"
! grep -q "outputs with the cache" "$d/vm.out" || fail "verify --model ran the model with a cache that differs"
echo "format_rules: ok"
