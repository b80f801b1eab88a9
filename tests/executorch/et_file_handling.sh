#!/usr/bin/env bash
# What stock ExecuTorch (the real runtime, et_harness) does with its packed_cache_path file, case by case,
# on a generated LLM-like program (two methods sharing weights) and xpack's export of it. Each case prints
# what was observed and checks it; docs/INTEGRATION.md ("Using xpack with ExecuTorch") records the results.
#   1. its own cache: first launch packs and writes the file; second launch serves it
#   2. a read-only file (and folder): served in full; the reopen for writing fails (logged), nothing written
#   3. two processes at once: (a) both loading the exported file: both served; (b) one writing its own cache
#      while another starts: the second can neither read nor write it and packs everything itself
#   4. a file left from another XNNPACK (every seed differs): every look-up refused, all packed again, on the
#      heap; the file is left as it was, so every later launch packs again
#   5. a damaged file (footer overwritten): truncated and rebuilt, the next launch serves it
# Environment as et_serve.sh (XPACK, XPACK_GENMODEL, XNNPACK_PREFIX, XPACK_ET_VERSION). Exit 0/1/77.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${XPACK:?}" "${XPACK_GENMODEL:?}"
fail() { echo "FAIL: $*"; exit 1; }
source "$here/env.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/et_file.XXXXXX")
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
field() { sed -n "s/^total .*\b$2=\([0-9]*\).*/\1/p" "$1"; }
counts() { sed -n 's/^total //p' "$1" | tr ' ' '\n' | grep -E '^(lookups|hits|from_file|packed|seed_mismatch|cache_loaded|cache_entries|cache_open_errors|cache_lock_errors|cache_fresh_write)=' | tr '\n' ' '; }
outputs() { grep '^output' "$1"; }
H() { "$ET_HARNESS" "$work/m.pte" --input-scale 0.1 "$@"; }

"$XPACK_GENMODEL" llm --size 2M -o "$work/m.pte" > /dev/null || fail genmodel
"$XPACK" pack "$work/m.pte" -o "$work/m.xpc" > /dev/null || fail pack
"$XPACK" export --executorch "$work/m.xpc" "$work/x.packed" > /dev/null 2>&1 || fail export
records=$(python3 "$here/xpwc.py" info "$work/x.packed" | sed -E 's/records=([0-9]+).*/\1/')
H --no-weight-cache > "$work/base.txt" 2>/dev/null || fail "no-cache run"
lookups=$(H --cache-file "$work/probe.packed" --no-execute 2>/dev/null | sed -n 's/^total lookups=\([0-9]*\).*/\1/p')
rm -f "$work/probe.packed"
echo "program: LLM-like, 2 methods sharing weights, $records exported records (= distinct packed weights), $lookups look-ups per process"
same() { diff <(outputs "$1") <(outputs "$work/base.txt") > /dev/null; }

echo "== 1. ExecuTorch's own cache"
H --cache-file "$work/own.packed" > "$work/own1.txt" 2> "$work/own1.err" || fail "own cache, first launch"
echo "first launch:  $(counts "$work/own1.txt")"
H --cache-file "$work/own.packed" > "$work/own2.txt" 2> "$work/own2.err" || fail "own cache, second launch"
echo "second launch: $(counts "$work/own2.txt")"
[ "$(field "$work/own1.txt" cache_fresh_write)" = 1 ] && [ "$(field "$work/own1.txt" packed)" -eq "$records" ] || fail "first launch did not pack and write"
[ "$(field "$work/own2.txt" from_file)" -eq "$lookups" ] && [ "$(field "$work/own2.txt" packed)" -eq 0 ] || fail "second launch not served in full"
same "$work/own1.txt" && same "$work/own2.txt" || fail "outputs differ"
grep -h "flock" "$work/own2.err" | head -1 | sed 's/^/  logged: /'

echo "== 2. read-only file in a read-only folder"
mkdir "$work/ro"; cp "$work/x.packed" "$work/ro/x.packed"; chmod 444 "$work/ro/x.packed"; chmod 555 "$work/ro"
as_user=()
if [ "$(id -u)" -eq 0 ]; then  # root ignores permissions: run as nobody
  command -v setpriv > /dev/null || { echo "SKIP: root without setpriv"; exit 77; }
  as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
# A copy nobody can run wherever the build cache is (a home folder may be private).
cp "$ET_HARNESS" "$work/et_harness"; chmod 755 "$work/et_harness"; chmod 644 "$work/m.pte"
before=$(sha256sum < "$work/ro/x.packed")
"${as_user[@]}" "$work/et_harness" "$work/m.pte" --input-scale 0.1 --cache-file "$work/ro/x.packed" > "$work/ro.txt" 2> "$work/ro.err" \
  || { cat "$work/ro.err"; fail "read-only run"; }
echo "read-only:     $(counts "$work/ro.txt")"
grep -h "open(" "$work/ro.err" | head -1 | sed 's/^/  logged: /'
[ "$(field "$work/ro.txt" from_file)" -eq "$lookups" ] && [ "$(field "$work/ro.txt" packed)" -eq 0 ] || fail "read-only file not served in full"
[ "$(field "$work/ro.txt" cache_open_errors)" -ge 1 ] || fail "expected the reopen for writing to fail"
[ "$before" = "$(sha256sum < "$work/ro/x.packed")" ] || fail "read-only file changed"
same "$work/ro.txt" || fail "outputs differ (read-only)"
# A read-only folder without the file: nothing to load, nothing can be created: packs on the heap.
"${as_user[@]}" "$work/et_harness" "$work/m.pte" --input-scale 0.1 --cache-file "$work/ro/absent.packed" > "$work/ro2.txt" 2> "$work/ro2.err" \
  || fail "read-only folder, absent file"
echo "read-only folder, no file: $(counts "$work/ro2.txt")"
[ ! -e "$work/ro/absent.packed" ] && [ "$(field "$work/ro2.txt" packed)" -gt 0 ] && same "$work/ro2.txt" || fail "absent file in read-only folder"

echo "== 3a. two processes loading the exported file at once"
cp "$work/x.packed" "$work/shared.packed"
H --cache-file "$work/shared.packed" --hold-ms 3000 > "$work/s1.txt" 2> "$work/s1.err" &
p1=$!
for _ in $(seq 100); do grep -q '^total' "$work/s1.txt" 2>/dev/null && break; sleep 0.1; done
H --cache-file "$work/shared.packed" > "$work/s2.txt" 2> "$work/s2.err" || fail "second process"
wait $p1 || fail "first process"
echo "process 1:     $(counts "$work/s1.txt")"
echo "process 2:     $(counts "$work/s2.txt")"
for f in s1 s2; do
  [ "$(field "$work/$f.txt" from_file)" -eq "$lookups" ] && same "$work/$f.txt" || fail "$f not served in full"
done

echo "== 3b. one process writing its own cache, another starting meanwhile"
H --cache-file "$work/race.packed" --hold-ms 3000 > "$work/w1.txt" 2> "$work/w1.err" &
p1=$!
for _ in $(seq 100); do grep -q '^total' "$work/w1.txt" 2>/dev/null && break; sleep 0.1; done
H --cache-file "$work/race.packed" > "$work/w2.txt" 2> "$work/w2.err" || fail "second process"
wait $p1 || fail "first process"
echo "writer:        $(counts "$work/w1.txt")"
echo "second:        $(counts "$work/w2.txt")"
grep -h "flock" "$work/w2.err" | head -1 | sed 's/^/  logged: /'
[ "$(field "$work/w2.txt" packed)" -eq "$records" ] && [ "$(field "$work/w2.txt" from_file)" -eq 0 ] || fail "expected the second process to pack every weight itself"
same "$work/w1.txt" && same "$work/w2.txt" || fail "outputs differ (race)"
H --cache-file "$work/race.packed" > "$work/w3.txt" 2>/dev/null || fail "third process"
echo "later launch:  $(counts "$work/w3.txt")"
[ "$(field "$work/w3.txt" from_file)" -eq "$lookups" ] || fail "the writer's file is not served afterwards"

echo "== 4. a file left from another XNNPACK (every seed differs)"
python3 "$here/xpwc.py" reseed "$work/x.packed" "$work/old.packed" > /dev/null
before=$(sha256sum < "$work/old.packed")
H --cache-file "$work/old.packed" > "$work/old1.txt" 2> "$work/old1.err" || fail "old file"
H --cache-file "$work/old.packed" > "$work/old2.txt" 2> "$work/old2.err" || fail "old file, second launch"
echo "first launch:  $(counts "$work/old1.txt")"
echo "second launch: $(counts "$work/old2.txt")"
grep -h "seed mismatch" "$work/old1.err" | head -1 | sed 's/^/  logged: /'
for f in old1 old2; do
  [ "$(field "$work/$f.txt" seed_mismatch)" -ge "$records" ] && [ "$(field "$work/$f.txt" packed)" -eq "$records" ] \
    && [ "$(field "$work/$f.txt" from_file)" -eq 0 ] && same "$work/$f.txt" || fail "$f: expected every look-up refused and repacked"
done
[ "$before" = "$(sha256sum < "$work/old.packed")" ] && echo "  the file is left unchanged: every launch packs again" \
  || echo "  the file was rewritten"

echo "== 5. a damaged file (footer overwritten)"
cp "$work/x.packed" "$work/bad.packed"
printf 'garbage-garbage-garb' | dd of="$work/bad.packed" bs=1 seek=$(( $(stat -c %s "$work/bad.packed") - 20 )) conv=notrunc 2>/dev/null
H --cache-file "$work/bad.packed" > "$work/bad1.txt" 2>/dev/null || fail "damaged file"
H --cache-file "$work/bad.packed" > "$work/bad2.txt" 2>/dev/null || fail "damaged file, second launch"
echo "first launch:  $(counts "$work/bad1.txt")"
echo "second launch: $(counts "$work/bad2.txt")"
[ "$(field "$work/bad1.txt" cache_fresh_write)" = 1 ] && [ "$(field "$work/bad2.txt" from_file)" -eq "$lookups" ] \
  && same "$work/bad1.txt" && same "$work/bad2.txt" || fail "expected truncate-and-rebuild"
echo "PASS"
