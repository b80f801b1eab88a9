#!/usr/bin/env bash
# Programs and weight files inside a zip archive (an APK's assets), named ARCHIVE!/MEMBER wherever a command
# takes a model: pack, run, inspect and verify --model parse a stored member where it lies, as they parse a file
# of its bytes (the cache packed from the members is byte for byte the one packed from the files); a member
# stored compressed, a whole archive given as a program, a corrupt member, the same member twice and an output
# that is the archive are refused with a message naming them, the archive untouched; bench refuses members.
XPACK=$1; GEN=$2
. "$(dirname "$0")/../model/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

"$GEN" ptd -o model.pte --ptd model.ptd > /dev/null
"$XPACK" -q pack model.pte --data model.ptd -o files.xpc
"$XPACK" run model.pte --data model.ptd --json > nocache.json
# A 3-byte member first, so that no member lies at a page or XNNPACK boundary.
python3 - <<'PY'
import zipfile
with zipfile.ZipFile("app.apk", "w") as z:
    z.writestr("abc", b"abc", compress_type=zipfile.ZIP_STORED)
    z.writestr("classes.dex", b"dex\n" * 300, compress_type=zipfile.ZIP_DEFLATED)
    z.write("model.pte", "assets/model.pte", compress_type=zipfile.ZIP_STORED)
    z.write("model.ptd", "assets/model.ptd", compress_type=zipfile.ZIP_STORED)
    z.write("files.xpc", "assets/model.xpc", compress_type=zipfile.ZIP_STORED)
    z.write("model.pte", "assets/deflated.pte", compress_type=zipfile.ZIP_DEFLATED)
    z.writestr("assets/broken.pte", open("model.pte", "rb").read()[:64] + b"\0" * 64, compress_type=zipfile.ZIP_STORED)
PY
before=$(sha256sum app.apk)
pte='app.apk!/assets/model.pte'; ptd='app.apk!/assets/model.ptd'; xpc='app.apk!/assets/model.xpc'

# pack from the members: the same cache as from the files (the inputs are recorded by base name).
"$XPACK" -q pack "$pte" --data "$ptd" -o members.xpc || fail "pack from members"
cmp members.xpc files.xpc || fail "the cache packed from the members differs from the one packed from the files"
echo "  pack from members: the same bytes as from the files"
# Without -o, the cache is written in this folder, named after the member (beside the archive it would be in it).
"$XPACK" -q pack "$pte" --data "$ptd" || fail "pack from members, default output"
cmp model.xpc files.xpc || fail "default output of a member"
echo "  pack without -o: ./model.xpc"

# run: the members with the cache inside the archive, every look-up hits, outputs identical to the files without one.
"$XPACK" run "$pte" --data "$ptd" --cache "$xpc" --json > members.json || fail "run from members"
compare_runs nocache.json members.json || fail "run from members with the member cache"
"$XPACK" verify "$xpc" --model "$pte" --data "$ptd" --json > vm.json || fail "verify --model of members"
verify_model_covers vm.json || fail "verify --model of members"
"$XPACK" inspect "$pte" --data "$ptd" --json > inspect_members.json || fail "inspect of members"
"$XPACK" inspect model.pte --data model.ptd --json > inspect_files.json
python3 - <<'PY' || fail "inspect of members differs from inspect of the files"
import json
def strip(v):  # the names differ; nothing else may
    if isinstance(v, dict): return {k: strip(x) for k, x in v.items() if k not in ("file", "name", "path")}
    if isinstance(v, list): return [strip(x) for x in v]
    return v.replace("app.apk!/assets/", "") if isinstance(v, str) else v
a, b = json.load(open("inspect_members.json")), json.load(open("inspect_files.json"))
assert strip(a) == strip(b), "inspect differs"
PY
echo "  inspect of members: as of the files"

# A .ptd member given as a program is taken as weights, with the note files get.
"$XPACK" -q pack "$pte" "$ptd" -o as_program.xpc 2> note.txt || fail "a .ptd member given as a program"
cmp as_program.xpc files.xpc || fail "a .ptd member given as a program: another cache"

refused() { # refused EXIT PATTERN COMMAND...: that exit, the pattern on stderr, nothing on stdout, archive untouched
  local want=$1 pattern=$2; shift 2
  set +e; "$@" > out.txt 2> err.txt; local rc=$?; set -e
  [ $rc = "$want" ] || fail "$*: exit $rc, expected $want: $(cat err.txt)"
  grep -q -- "$pattern" err.txt || fail "$*: expected /$pattern/ in: $(cat err.txt)"
  [ ! -s out.txt ] || fail "$*: wrote to stdout: $(head -c 300 out.txt)"
  [ "$(sha256sum app.apk)" = "$before" ] || fail "$*: the archive changed"
}
refused 3 "stored compressed (zip method 8).*unzip -p 'app.apk' 'assets/deflated.pte'" \
  "$XPACK" pack 'app.apk!/assets/deflated.pte' -o x.xpc
refused 3 "app.apk is a zip archive, not a program.*assets/model.pte, assets/model.ptd, assets/deflated.pte (compressed)" \
  "$XPACK" inspect app.apk
refused 3 "app.apk!/assets/broken.pte" "$XPACK" run 'app.apk!/assets/broken.pte'
refused 3 'no member named "assets/missing.pte"' "$XPACK" pack 'app.apk!/assets/missing.pte' -o x.xpc
refused 2 "given twice" "$XPACK" pack "$pte" "$pte" -o x.xpc
refused 2 "the output is the input app.apk" "$XPACK" pack "$pte" --data "$ptd" -o app.apk
ln app.apk hard.apk
refused 2 "the same file by another name" "$XPACK" pack "$pte" --data "$ptd" -o hard.apk
refused 3 "bench measures files, not members of an archive" "$XPACK" bench "$pte" --data "$ptd" --reps 1
[ ! -e x.xpc ] || fail "a refused pack wrote x.xpc"
echo "  refused, archive untouched: a compressed member, a whole archive, a corrupt member, a missing one, one given twice, the archive as output (also by a hard link), bench"
