#!/usr/bin/env bash
# Caches inside zip archives, as an app bundle (APK) holds its assets: `xpack verify`, `dump`, `run` and `inflate` open
# ARCHIVE!/MEMBER where it lies, and say what the device will find (stored or compressed, mapped in place or
# read into memory); a whole archive given as a cache names the caches inside it; every hostile archive of
# make_archives.py is refused with exit 3 and a message naming the archive and the record, stdout empty, the
# archive untouched. The library's view of every member agrees with Python's zipfile (archive_members).
XPACK=$1; GEN=$2; MEMBERS=$3
. "$(dirname "$0")/../model/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

"$GEN" llm --size 1M -o model.pte > /dev/null
"$XPACK" -q pack model.pte -o model.xpc
"$XPACK" run model.pte --json > nocache.json
mkdir apk
python3 "$here/make_archives.py" model.xpc apk > offsets.txt
entries=$("$XPACK" dump --json model.xpc | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["entries"]))')
alignment=$("$XPACK" dump --json model.xpc | python3 -c 'import json,sys; print(json.load(sys.stdin)["xnn_alignment"])')

# The library's members against zipfile's, for every sound archive.
for name in page xnn agp deflated zip64 zip64_comment others; do
  "$MEMBERS" apk/$name.apk > members.txt || fail "$name: archive_members"
  python3 - apk/$name.apk members.txt <<'PY' || fail "$name: the members differ from zipfile's"
import struct, sys, zipfile
path, seen = sys.argv[1], [l.split(" ") for l in open(sys.argv[2]).read().splitlines()]
with zipfile.ZipFile(path) as z, open(path, "rb") as f:
    infos = z.infolist()
    assert len(seen) == len(infos), (len(seen), len(infos))
    for i, s in zip(infos, seen):
        f.seek(i.header_offset + 26)
        n, m = struct.unpack("<HH", f.read(4))
        data = i.header_offset + 30 + n + m
        f.seek(data)
        magic = f.read(8) == b"\x89XPC\r\n\x1a\n" and i.compress_type == 0
        want = [i.filename, str(i.compress_type), str(data), str(i.compress_size), str(i.file_size), str(int(magic))]
        assert s == want, (s, want)
PY
done
echo "  archive_members agrees with zipfile on 7 archives (Zip64 included, also behind a 64 KiB comment)"
"$MEMBERS" --api apk/xnn.apk assets/model.xpc > /dev/null || fail "the API's promises"
echo "  xpack_archive_find/each, xpack_file_open_range and xpack_verify_range keep their promises"

# Stored members: verify sound, says where the member lies and whether the loader maps it there; run hits every
# look-up with outputs identical to no cache; dump sees the cache's entries.
while read -r name offset; do
  case $name in page|xnn|agp|zip64|zip64_comment|others) ;; *) continue ;; esac
  member="apk/$name.apk!/assets/model.xpc"
  "$XPACK" verify --json "$member" > v.json || fail "$name: verify"
  python3 - v.json "$offset" "$alignment" <<'PY' || fail "$name: verify's report"
import json, sys
v, offset, alignment = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
a = v["archive"]
assert v["sound"] and v["served_here"], v
assert a["member"] == "assets/model.xpc" and a["stored"] and a["method"] == 0, a
assert a["data_offset"] == offset, (a["data_offset"], offset)
assert a["mapped_in_place"] == (offset % alignment == 0), (a, alignment)
assert a["page_aligned"] == (offset % 4096 == 0), a
PY
  "$XPACK" verify "$member" > v.txt
  if [ $((offset % alignment)) = 0 ]; then grep -q "maps it where it lies" v.txt || fail "$name: verify's text: $(cat v.txt)"
  else grep -q "reads its .* bytes into the app's memory" v.txt || fail "$name: verify's text: $(cat v.txt)"; fi
  "$XPACK" run model.pte --cache "$member" --json > run.json || fail "$name: run"
  compare_runs nocache.json run.json > /dev/null || fail "$name: run with the member"
  [ "$(python3 -c 'import json; print(json.load(open("run.json"))["cache"])')" = "$member" ] || fail "$name: run names the cache"
  [ "$("$XPACK" dump --json "$member" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["entries"]))')" = "$entries" ] ||
    fail "$name: dump"
  echo "  $name: member at offset $offset: verify sound, $( [ $((offset % alignment)) = 0 ] && echo mapped in place || echo read into memory), run hits every look-up, outputs identical, dump"
done < offsets.txt

# verify --model through the member, and run choosing among a member and a file.
"$XPACK" verify "apk/page.apk!/assets/model.xpc" --model model.pte --json > vm.json || fail "verify --model of a member"
verify_model_covers vm.json > /dev/null || fail "verify --model of a member"
"$XPACK" run model.pte --cache "apk/agp.apk!/assets/model.xpc" --cache model.xpc --json > best.json || fail "run, two caches"
compare_runs nocache.json best.json > /dev/null || fail "run, two caches"
python3 -c 'import json; c = json.load(open("best.json"))["cache_candidates"]; assert c[0]["state"] == "chosen", c'
mkfifo fifo.xpc # never waited on: passed over as not a regular file
timeout 60 "$XPACK" run model.pte --cache fifo.xpc --cache "apk/agp.apk!/assets/model.xpc" --json > fifo.json ||
  fail "run, a FIFO and a member"
python3 -c 'import json; c = json.load(open("fifo.json"))["cache_candidates"]; assert c[0]["state"] == "not opened" and "FIFO" in c[0]["message"] and c[1]["state"] == "chosen", c'
set +e; "$XPACK" run model.pte --cache "apk/agp.apk!/assets/model.xpc" --cache missing.xpc > out.txt 2> err.txt; rc=$?; set -e
[ $rc = 3 ] && [ ! -s out.txt ] && grep -q "run: missing.xpc: cannot open" err.txt || fail "run, a member and a missing file: exit $rc, $(cat err.txt)"
echo "  verify --model through a member; run --cache MEMBER --cache FILE chooses the member, every look-up hits; a FIFO passed over"
# export takes a cache file: a member is a usage error that says so (it said "cannot open" of the archive's name).
set +e; "$XPACK" export --executorch "apk/agp.apk!/assets/model.xpc" out.xpwc > out.txt 2> err.txt; rc=$?; set -e
[ $rc = 2 ] && [ ! -e out.xpwc ] && grep -q "names a member of an archive: export takes a cache file" err.txt ||
  fail "export of a member: exit $rc, $(cat err.txt)"
# ... but where no archive of that name exists either, the input is missing (exit 3), not a usage error.
set +e; "$XPACK" export --executorch "apk/none.apk!/assets/model.xpc" out.xpwc > out.txt 2> err.txt; rc=$?; set -e
[ $rc = 3 ] && [ ! -e out.xpwc ] && grep -q "none.apk!/assets/model.xpc: cannot open" err.txt ||
  fail "export of a member of a missing archive: exit $rc, $(cat err.txt)"

# The transport form shipped as an asset, inflated from where it lies (xpack_inflate_range), as an app does at
# install: the very file `pack` writes without --zstd; the archive itself is refused as the output.
"$XPACK" -q pack model.pte --zstd -o model.z.xpc
python3 - apk/transport.apk model.z.xpc <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("classes.dex", bytes(range(256)) * 13, compress_type=zipfile.ZIP_DEFLATED)
    z.write(sys.argv[2], "assets/model.z.xpc", compress_type=zipfile.ZIP_STORED)
PY
"$XPACK" inflate "apk/transport.apk!/assets/model.z.xpc" inflated.xpc > /dev/null || fail "inflate of a member"
cmp -s inflated.xpc model.xpc || fail "inflate of a member: not the file pack writes"
before=$(sha256sum apk/transport.apk)
set +e; "$XPACK" inflate "apk/transport.apk!/assets/model.z.xpc" apk/transport.apk > out.txt 2> err.txt; rc=$?; set -e
[ $rc = 2 ] && grep -q "the output is the file holding the input" err.txt && [ "$before" = "$(sha256sum apk/transport.apk)" ] ||
  fail "inflate into its own archive: exit $rc, $(cat err.txt)"
[ "$(status_of "$XPACK" inflate "apk/deflated.apk!/assets/model.xpc" x.xpc)" = 3 ] && [ ! -e x.xpc ] || fail "inflate of a deflated member"
echo "  a transport-form member inflated where it lies: the file pack writes; its own archive refused as the output"

# A compressed member: verify reports it as the cache's one problem (exit 1); run and dump cannot open it.
member="apk/deflated.apk!/assets/model.xpc"
[ "$(status_of "$XPACK" verify "$member")" = 1 ] || fail "verify of a deflated member: not exit 1"
"$XPACK" verify "$member" > v.txt || true
grep -q 'stored deflated.*noCompress' v.txt || fail "verify of a deflated member: the reason: $(cat v.txt)"
for cmd in "run model.pte --cache" "dump"; do
  set +e; $XPACK $cmd "$member" > out.txt 2> err.txt; rc=$?; set -e
  [ $rc = 3 ] && [ ! -s out.txt ] && grep -q "deflated" err.txt || fail "$cmd a deflated member: exit $rc, $(cat err.txt)"
done
echo "  a deflated member: verify exit 1 naming the fix, run and dump exit 3"

# A whole archive where a cache is expected, a missing member, a missing archive.
set +e; "$XPACK" verify apk/others.apk > out.txt 2> err.txt; rc=$?; set -e
[ $rc = 3 ] && [ ! -s out.txt ] || fail "verify of a whole archive: exit $rc"
grep -q 'is a zip archive: name the cache inside it as apk/others.apk!/MEMBER; it holds 3 members that look like caches: assets/old.xpc (compressed), assets/renamed.bin, assets/model.xpc' err.txt ||
  fail "verify of a whole archive: $(cat err.txt)"
# A member with an empty name is accepted, as Android's reader accepts it, and never listed (it cannot be named),
# though it holds a cache's bytes.
python3 -c '
import sys, zipfile
with zipfile.ZipFile("apk/empty_name.apk", "w") as z:
    z.writestr(zipfile.ZipInfo(""), open(sys.argv[1], "rb").read(), compress_type=zipfile.ZIP_STORED)
    z.writestr(zipfile.ZipInfo("assets/model.xpc"), open(sys.argv[1], "rb").read(), compress_type=zipfile.ZIP_STORED)' model.xpc
"$XPACK" verify "apk/empty_name.apk!/assets/model.xpc" > /dev/null || fail "a cache beside a member with an empty name"
set +e; "$XPACK" verify apk/empty_name.apk > out.txt 2> err.txt; rc=$?; set -e
[ $rc = 3 ] && grep -q 'it holds 1 member that looks like a cache: assets/model.xpc$' err.txt ||
  fail "verify of an archive holding an empty name: exit $rc, $(cat err.txt)"
set +e; "$XPACK" dump "apk/page.apk!/assets/none.xpc" > out.txt 2> err.txt; rc=$?; set -e
[ $rc = 3 ] && grep -q 'apk/page.apk: no member named "assets/none.xpc"' err.txt || fail "a missing member: exit $rc, $(cat err.txt)"
[ "$(status_of "$XPACK" verify "apk/none.apk!/assets/model.xpc")" = 3 ] || fail "a missing archive"
# A path holding "!/" that names a file is that file.
mkdir 'dir!' && cp model.xpc 'dir!/model.xpc'
"$XPACK" verify 'dir!/model.xpc' > /dev/null || fail "a file whose path holds !/"
echo "  a whole archive names its caches; a missing member or archive: exit 3; a file named with !/ is a file"

# Hostile archives: exit 3, a message naming the archive and what is wrong, nothing on stdout, input untouched.
expect_refusal() { # NAME PATTERN
  local path=apk/$1.apk before after rc
  before=$(sha256sum "$path")
  for cmd in "verify" "dump" "run model.pte --cache"; do
    set +e; $XPACK $cmd "$path!/assets/model.xpc" > out.txt 2> err.txt; rc=$?; set -e
    [ $rc = 3 ] || fail "$1: $cmd exit $rc, expected 3: $(cat err.txt)"
    [ ! -s out.txt ] || fail "$1: $cmd wrote to stdout"
    grep -q "apk/$1.apk: .*$2" err.txt || fail "$1: $cmd: $(cat err.txt), expected /$2/"
  done
  set +e; "$MEMBERS" "$path" > /dev/null 2> err.txt; rc=$?; set -e
  [ $rc = 3 ] || fail "$1: xpack_archive_each accepted it"
  after=$(sha256sum "$path")
  [ "$before" = "$after" ] || fail "$1: the archive changed"
}
expect_refusal duplicate 'two members named "assets/model.xpc"'
expect_refusal count 'counts 60000 members, more than'
expect_refusal central_past_end 'the central directory (.*) runs past its end records'
expect_refusal local_method 'the local header at offset [0-9]* gives another method'
expect_refusal local_name 'names another member than the central directory record'
expect_refusal local_signature 'has no signature (PK\\3\\4)'
expect_refusal encrypted 'is encrypted'
expect_refusal sizes_differ 'stored, yet [0-9]* bytes in the archive and [0-9]* extracted'
expect_refusal past_central 'run past the central directory'
expect_refusal local_offset 'leaves no room for a 30-byte header'
expect_refusal name_length 'run past the central directory.s end'
expect_refusal zip64_marked 'no Zip64 extra field gives its value'
expect_refusal multi_disk 'split over several disks'
expect_refusal zip64_locator 'Zip64 locator at offset [0-9]*: Zip64 end record at [0-9]*'
expect_refusal zip64_end 'no Zip64 end record signature'
expect_refusal no_end 'no end of central directory record'
expect_refusal truncated 'no end of central directory record'
expect_refusal local_sizes 'the local header at offset [0-9]* gives CRC [0-9a-f]* and sizes 100 and 100'
expect_refusal local_crc 'the local header at offset [0-9]* gives CRC 04030201'
expect_refusal trailing 'end at offset [0-9]*, not at the file.s end'
expect_refusal name_zero 'a member name with a zero byte'
expect_refusal prefix 'offset 0: expected the first member.s local header'
expect_refusal hidden 'comment end at offset [0-9]*, not at the file.s end'
echo "  23 hostile archives: exit 3 from verify, dump and run, each naming the record, stdout empty, input untouched"
# An empty member name names no member (it once packed a hidden ./.xpc named after nothing).
set +e; "$XPACK" verify "apk/page.apk!/" > /dev/null 2> err.txt; rc=$?; set -e
[ $rc = 3 ] && grep -q "an empty member name" err.txt || fail "an empty member name: exit $rc, $(cat err.txt)"
