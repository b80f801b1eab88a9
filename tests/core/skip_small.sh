#!/usr/bin/env bash
# XPACK_OPEN_SKIP_SMALL (issue 17): a cache file under 128 KiB is skipped from its size alone, unread, and
# XNNPACK packs; a larger one is served as without the flag.
#   - `xpack run --skip-small` on a small cache: no look-up reaches the loader (it hands XNNPACK no provider),
#     the refusal names the skip, outputs those of a run without a cache; without the flag the cache hits in full.
#   - A cache over 128 KiB with --skip-small: hits in full.
#   - The boundary, on files of junk: 131071 bytes are skipped unread (a skipped file is not validated);
#     131072 bytes are read and refused as not a cache; a file too short to be a cache, a folder and a
#     missing file are still errors.
#   - `xpack pack` flags exactly the files an app would skip (likely_slower_than_packing).
#   - `xpack bench` opens the cache as apps are advised (skipped: no hit) and serves it with --serve-small.
#   skip_small.sh XPACK GENMODEL
XPACK=$1; GEN=$2
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

"$GEN" conv -o small.pte > /dev/null
"$GEN" fp16 -o large.pte > /dev/null
for m in small large; do
  "$XPACK" pack $m.pte -o $m.xpc --json > $m.pack.json 2> $m.pack.err || fail "pack $m"
  "$XPACK" run $m.pte --json > $m.none.json || fail "run $m without a cache"
done
small_size=$(stat -c %s small.xpc); large_size=$(stat -c %s large.xpc)
[ "$small_size" -lt 131072 ] && [ "$large_size" -ge 131072 ] ||
  fail "the generated caches no longer straddle 128 KiB ($small_size and $large_size bytes)"
[ "$(json_value small.pack.json likely_slower_than_packing)" = True ] && [ "$(json_value large.pack.json likely_slower_than_packing)" = False ] &&
  [ "$(json_value small.pack.json wins_only_warm)" = False ] ||
  fail "pack does not flag exactly the cache an app would skip"

"$XPACK" run small.pte --cache small.xpc --skip-small --json > skipped.json || fail "run --skip-small on a small cache"
[ "$(json_value skipped.json lookups)" = 0 ] || fail "small cache with --skip-small: $(json_value skipped.json lookups) look-ups reached it"
case "$(json_value skipped.json cache_refused)" in "skipped unread (XPACK_OPEN_SKIP_SMALL)"*) ;;
  *) fail "small cache: refusal does not name the skip: $(json_value skipped.json cache_refused)" ;; esac
[ "$(run_output_hashes skipped.json)" = "$(run_output_hashes small.none.json)" ] || fail "small cache skipped: other outputs"
"$XPACK" run small.pte --cache small.xpc --json > served.json || fail "run on a small cache"
[ "$(json_value served.json hits)" -gt 0 ] && [ "$(json_value served.json hits)" = "$(json_value served.json lookups)" ] ||
  fail "small cache without --skip-small: not served in full"
"$XPACK" run large.pte --cache large.xpc --skip-small --json > large.json || fail "run --skip-small on a large cache"
[ "$(json_value large.json hits)" -gt 0 ] && [ "$(json_value large.json hits)" = "$(json_value large.json lookups)" ] &&
  [ "$(json_value large.json cache_refused)" = None ] ||
  fail "large cache with --skip-small: not served in full"
[ "$(run_output_hashes large.json)" = "$(run_output_hashes large.none.json)" ] || fail "large cache: other outputs"
echo "small cache ($small_size bytes) skipped, large ($large_size bytes) served; outputs identical"

# The boundary is the file's size, and nothing under it is read.
head -c 131071 /dev/zero | tr '\0' 'x' > junk_under.xpc
head -c 131072 /dev/zero | tr '\0' 'x' > junk_at.xpc
"$XPACK" run small.pte --cache junk_under.xpc --skip-small --json > under.json || fail "131071 bytes of junk: not skipped"
[ "$(json_value under.json lookups)" = 0 ] && [ "$(run_output_hashes under.json)" = "$(run_output_hashes small.none.json)" ] || fail "junk under 128 KiB served"
set +e; "$XPACK" run small.pte --cache junk_at.xpc --skip-small > at.out 2> at.err; st=$?; set -e
[ "$st" = 3 ] && grep -q "junk_at.xpc" at.err || fail "131072 bytes of junk: exit $st, expected 3 naming the file: $(cat at.err)"
head -c 10 small.xpc > short.xpc; mkdir folder.xpc
for bad in short.xpc folder.xpc missing.xpc; do
  set +e; "$XPACK" run small.pte --cache $bad --skip-small > bad.out 2> bad.err; st=$?; set -e
  [ "$st" != 0 ] && grep -q "$bad" bad.err || fail "$bad with --skip-small: exit $st: $(cat bad.err)"
done
echo "boundary: 131071 bytes skipped unread, 131072 read and refused; short, folder and missing files are errors"

"$XPACK" bench small.pte --cache small.xpc --reps 1 --variants cache_warm --json > bench.json || fail "bench"
"$XPACK" bench small.pte --cache small.xpc --reps 1 --variants cache_warm --serve-small --json > bench_served.json ||
  fail "bench --serve-small"
python3 - <<'PY' || fail "bench: small cache not skipped by default or not served with --serve-small"
import json
b, s = json.load(open("bench.json")), json.load(open("bench_served.json"))
assert b["lookups"]["cache_warm"] == 0 and b["samples"]["cache_warm"][0]["cache_refused"].startswith("skipped unread"), b["lookups"]
assert s["hits"]["cache_warm"] > 0 and s["hits"]["cache_warm"] == s["lookups"]["cache_warm"], s["hits"]
assert b["outputs_identical"] and s["outputs_identical"]
PY
echo "bench: skipped as apps are advised, served with --serve-small"
