#!/usr/bin/env bash
# tools/phone-bundle.sh over this cross build: for each program, the caches it keeps, tried in its order
# (xpack_cache_open_best through `xpack run --cache ...`), serve every look-up on every CPU it was given, with
# outputs bit-identical to no cache there; a CPU it dropped is served whole by a kept cache (the reason it
# gives). A re-run names the files of an earlier one it did not write and removes a killed run's work folder.
# A program that cannot be packed, or a place that cannot take its file, fails it with DIR unchanged; a usage
# error (--out a file) exits 2; nothing to pack exits 0 and leaves no folder made for it.
# phone_bundle.sh BUILD_DIR GENMODEL CPU...   (environment: XPACK_EMULATOR, the qemu command line without -cpu;
# XPACK_REAL_TESTDATA)
set -euo pipefail
build=$1 gen=$2; shift 2
cpus=("$@")
: "${XPACK_EMULATOR:?the qemu-aarch64 command line}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../core/lib.sh" # fail, json_value, run_output_hashes
bundle=$here/../../tools/phone-bundle.sh
read -r -a emulator <<<"$XPACK_EMULATOR"
as() { local cpu=$1; shift; "${emulator[@]}" -cpu "$cpu" "$@"; }
xpack=$build/tools/xpack
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT

# qd8 x qc8w and a convolution (whose family an in-order core packs otherwise), small enough for qemu.
as max "$gen" qd8-qc8w -o "$d/qd8.pte" > /dev/null || fail "genmodel qd8-qc8w"
as max "$gen" conv -o "$d/conv.pte" > /dev/null || fail "genmodel conv"
programs=("$d/qd8.pte" "$d/conv.pte")
real=${XPACK_REAL_TESTDATA:-}
for f in person_detect_int8; do
  if [ -n "$real" ] && [ -f "$real/$f.pte" ]; then programs+=("$real/$f.pte"); else echo "$f: not tested (no $real/$f.pte)"; fi
done
cpu_args=(); for c in "${cpus[@]}"; do cpu_args+=(--cpu "$c"); done

dropped=0
for p in "${programs[@]}"; do
  name=$(basename "$p" .pte) out=$d/bundle
  bash "$bundle" --build "$build" --out "$out" "${cpu_args[@]}" "$p" > "$d/$name.log" 2>&1 || { cat "$d/$name.log"; fail "$name: phone-bundle.sh failed"; }
  sed "s/^/$name: /" "$d/$name.log"
  mapfile -t kept < "$out/$name.caches"
  [ ${#kept[@]} -ge 1 ] || fail "$name: no cache kept"
  caches=(); for k in "${kept[@]}"; do [ -f "$out/$k" ] || fail "$name: $k is listed but absent"; caches+=(--cache "$out/$k"); done
  [ "$(ls "$out" | grep -c "^$name\..*\.xpc$")" = ${#kept[@]} ] || fail "$name: files beside the kept ones: $(ls "$out")"
  dropped=$((dropped + $(grep -c "not kept$" "$d/$name.log" || true)))
  for cpu in "${cpus[@]}"; do
    as "$cpu" "$xpack" run "$p" --json > "$d/none.json" || fail "$name as $cpu: run without a cache"
    as "$cpu" "$xpack" run "$p" "${caches[@]}" --json > "$d/bundle.json" || fail "$name as $cpu: run with the bundle"
    [ "$(json_value "$d/bundle.json" lookups)" -gt 0 ] && [ "$(json_value "$d/bundle.json" hits)" = "$(json_value "$d/bundle.json" lookups)" ] ||
      fail "$name as $cpu: kept $(json_value "$d/bundle.json" cache), $(json_value "$d/bundle.json" hits) of $(json_value "$d/bundle.json" lookups) look-ups hit"
    [ "$(run_output_hashes "$d/bundle.json")" = "$(run_output_hashes "$d/none.json")" ] || fail "$name as $cpu: outputs differ from no cache"
    echo "$name as $cpu: kept $(basename "$(json_value "$d/bundle.json" cache)"), every look-up hits, outputs identical"
  done
done
echo "$dropped CPUs dropped as served whole by a kept cache"

# A re-run into DIR leaves another run's file where it is, and names it: NAME.caches alone lists what to ship.
# It removes the work folder of a killed run (its lock free), not that of a run still going (its lock held).
again=$d/again; mkdir -p "$again"; printf 'an earlier run' > "$again/qd8.cortex-a53.xpc"
mkdir "$again/.phone-bundle.Killed" "$again/.phone-bundle.Runnin"
touch "$again/.phone-bundle.Killed/lock" "$again/.phone-bundle.Killed/qd8.max.xpc" "$again/.phone-bundle.Runnin/lock"
exec 8> "$again/.phone-bundle.Runnin/lock"; flock -n 8 # held by this test, as a running bundle holds its own
bash "$bundle" --build "$build" --out "$again" --cpu max "$d/qd8.pte" > "$d/again.log" 2>&1 || { cat "$d/again.log"; fail "re-run: phone-bundle.sh failed"; }
[ "$(cat "$again/qd8.caches")" = qd8.max.xpc ] || fail "re-run: qd8.caches is $(cat "$again/qd8.caches")"
[ "$(cat "$again/qd8.cortex-a53.xpc")" = 'an earlier run' ] || fail "re-run: the earlier file was changed"
grep -q "qd8.cortex-a53.xpc is not in qd8.caches" "$d/again.log" || { cat "$d/again.log"; fail "re-run: the earlier file is not named"; }
[ ! -e "$again/.phone-bundle.Killed" ] && grep -q "removed .*\.phone-bundle.Killed, left by a killed run" "$d/again.log" ||
  fail "re-run: a killed run's work folder was not removed: $(ls -A "$again")"
[ -d "$again/.phone-bundle.Runnin" ] || fail "re-run: removed the work folder of a run still going"
exec 8>&-

# Nothing is moved unless every place can take its file: a folder where the list goes fails the run first.
rm -r "$again/.phone-bundle.Runnin" "$again/qd8.caches"; mkdir "$again/qd8.caches"; before=$(ls -A "$again"; cat "$again"/qd8.max.xpc | sha256sum)
rc=0; bash "$bundle" --build "$build" --out "$again" --cpu max "$d/qd8.pte" > "$d/blocked.log" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "qd8.caches is not a regular file: not replaced" "$d/blocked.log" || { cat "$d/blocked.log"; fail "a folder in the list's place: exit $rc"; }
[ "$(ls -A "$again"; cat "$again"/qd8.max.xpc | sha256sum)" = "$before" ] || fail "a failed run changed DIR: $(ls -A "$again")"
# --out a file is a usage error; programs with nothing to pack: exit 0, and a DIR made for them is gone.
rc=0; bash "$bundle" --build "$build" --out "$d/qd8.pte" "$d/qd8.pte" > /dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "--out a file: exit $rc, expected 2"
as max "$gen" bmm -o "$d/bmm.pte" > /dev/null || fail "genmodel bmm"
bash "$bundle" --build "$build" --out "$d/none" --cpu max "$d/bmm.pte" > "$d/none.log" 2>&1 || { cat "$d/none.log"; fail "nothing to pack: exit $?"; }
grep -q "nothing to pack" "$d/none.log" && [ ! -e "$d/none" ] || { cat "$d/none.log"; fail "nothing to pack: $(ls -A "$d/none" 2>&1)"; }

# Failures: a file that is no program leaves nothing in DIR; no program at all is a usage error.
printf 'not a program' > "$d/bad.pte"
rc=0; bash "$bundle" --build "$build" --out "$d/bad_out" "$d/bad.pte" > "$d/bad.log" 2>&1 || rc=$?
[ $rc = 1 ] || { cat "$d/bad.log"; fail "a file that is no program: exit $rc, expected 1"; }
[ -z "$(ls -A "$d/bad_out")" ] || fail "a failed run left files: $(ls -A "$d/bad_out")"
rc=0; bash "$bundle" --out "$d/x" > /dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "no program: exit $rc, expected 2"
echo "PASS"
