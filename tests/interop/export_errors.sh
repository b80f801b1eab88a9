#!/usr/bin/env bash
# xpack export --executorch refuses what it must: usage errors exit 2; a missing, foreign, truncated,
# damaged or transport-form cache exits 3 with a message naming the file; an unwritable output exits 4.
# Never a crash, never an output file (an existing one is left as it was), never a temporary file left.
XPACK=$1; FIXTURE=$2; GEN=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../model/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
"$FIXTURE" cache good.xpc || fail "fixture"
"$XPACK" export --executorch good.xpc good.xpwc > /dev/null 2>&1 || fail "export of the intact cache"

# expect_refusal EXIT PATTERN CACHE [OUT]: exit code, a message matching PATTERN, OUT untouched.
expect_refusal() {
  local want=$1 pattern=$2 cache=$3 out=${4:-out.xpwc}
  [ -d "$(dirname "$out")" ] && echo "previous contents" > "$out"
  set +e; "$XPACK" export --executorch "$cache" "$out" > stdout.txt 2> err.txt; local st=$?; set -e
  [ "$st" = "$want" ] || fail "$cache: exit $st, expected $want: $(cat err.txt)"
  grep -q -- "$pattern" err.txt || fail "$cache: message does not match '$pattern': $(cat err.txt)"
  if [ -d "$(dirname "$out")" ]; then
    [ "$(cat "$out")" = "previous contents" ] || fail "$cache: $out was changed"
    rm -f "$out"
  fi
  [ -z "$(find . -name '.xpack-*')" ] || fail "$cache: temporary file left behind"
  echo "  refused ($want): $(head -c 200 err.txt)"
}

echo "== usage"
for args in "" "--executorch" "--executorch good.xpc" "good.xpc out.xpwc" "--executorch good.xpc a b" "--zip good.xpc out.xpwc"; do
  st=$(status_of "$XPACK" export $args)
  [ "$st" = 2 ] || fail "export $args: exit $st, expected 2"
done
[ ! -e out.xpwc ] || fail "usage error wrote a file"

echo "== bad caches"
expect_refusal 3 "missing.xpc" missing.xpc
echo "not a cache at all, just some text that is long enough to hold a footer and a header..........." > text.xpc
head -c 300 /dev/zero >> text.xpc
expect_refusal 3 "text.xpc" text.xpc
size=$(stat -c %s good.xpc)
head -c $((size - 1)) good.xpc > cut.xpc
expect_refusal 3 "cut.xpc" cut.xpc
head -c $((size / 2)) good.xpc > half.xpc
expect_refusal 3 "half.xpc" half.xpc
# A damaged packed weight: only the region's XXH3-64 shows it, and the export names it.
region=$("$XPACK" dump --json good.xpc | python3 -c 'import json,sys; r=json.load(sys.stdin)["regions"][0]; print(r["offset"] + r["size"] // 2)')
cp good.xpc region.xpc
printf '\xa5' | dd of=region.xpc bs=1 seek="$region" conv=notrunc status=none
expect_refusal 3 "region.xpc: damaged, nothing exported: region 0 .*xpack verify" region.xpc
# The transport form (zstd regions): refused with the command that fixes it; once inflated, the export is
# byte for byte that of the cache packed without --zstd.
"$GEN" llm --size 1M -o m.pte > /dev/null
"$XPACK" pack m.pte -o m.xpc > /dev/null && "$XPACK" pack m.pte --zstd -o transport.xpc > /dev/null || fail "pack"
expect_refusal 3 "transport form; run \`xpack inflate transport.xpc" transport.xpc
"$XPACK" inflate transport.xpc inflated.xpc > /dev/null || fail "inflate"
"$XPACK" export --executorch inflated.xpc inflated.xpwc > /dev/null 2>&1 || fail "export of the inflated cache"
"$XPACK" export --executorch m.xpc m.xpwc > /dev/null 2>&1 || fail "export of the mappable cache"
cmp -s inflated.xpwc m.xpwc || fail "the inflated cache exports differently"

echo "== unwritable output"
expect_refusal 2 "no/such/dir/out.xpwc" good.xpc no/such/dir/out.xpwc   # a bad OUT, found before the work
# A write that fails half way (file size limit below the output's size): exit 4, the old file stays.
[ "$(stat -c %s good.xpwc)" -gt 8192 ] || fail "fixture export too small for the size-limit case"
echo "previous contents" > limited.xpwc
set +e; bash -c 'trap "" XFSZ; ulimit -f 8; exec "$@"' _ "$XPACK" export --executorch good.xpc limited.xpwc > /dev/null 2> err.txt; st=$?; set -e
[ "$st" = 4 ] || fail "size limit: exit $st: $(cat err.txt)"
grep -q "limited.xpwc: cannot write the temporary file" err.txt || fail "size limit message: $(cat err.txt)"
[ "$(cat limited.xpwc)" = "previous contents" ] || fail "size limit: the previous file was changed"
[ -z "$(find . -name '.xpack-*')" ] || fail "size limit: temporary file left behind"
echo "  refused (4): $(head -c 200 err.txt)"

echo "== damaged copies: refused, or (damage in padding) exported identically; never a crash"
python3 - "$XPACK" good.xpc good.xpwc <<'PY' || fail "damaged copies"
import os, subprocess, sys
xpack, cache, want = sys.argv[1], sys.argv[2], open(sys.argv[3], "rb").read()
good = open(cache, "rb").read()
n, refused, same = 0, 0, 0
offsets = sorted(set(list(range(0, 200)) + list(range(0, len(good), 331)) + list(range(len(good) - 200, len(good)))))
for off in offsets:
    b = bytearray(good)
    b[off] ^= 0x5A
    open("bad.xpc", "wb").write(b)
    if os.path.exists("bad.xpwc"):
        os.remove("bad.xpwc")
    r = subprocess.run([xpack, "export", "--executorch", "bad.xpc", "bad.xpwc"], capture_output=True)
    n += 1
    assert r.returncode in (0, 3), f"byte {off}: exit {r.returncode}: {r.stderr.decode()}"
    if r.returncode == 3:
        refused += 1
        assert not os.path.exists("bad.xpwc"), f"byte {off}: refused but wrote output"
        assert b"bad.xpc" in r.stderr, f"byte {off}: message does not name the file"
    else:
        assert open("bad.xpwc", "rb").read() == want, f"byte {off}: accepted and exported something else"
        same += 1
print(f"  {n} damaged copies: {refused} refused, {same} exported identically (damage in padding), 0 crashes")
assert refused > 0 and [f for f in os.listdir(".") if f.startswith(".bad.xpwc")] == []
PY
echo "errors: ok"
