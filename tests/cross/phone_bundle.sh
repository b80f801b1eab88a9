#!/usr/bin/env bash
# tools/phone-bundle.sh over this cross build: for each program, the caches it keeps, tried in its order
# (xpack_cache_open_best through `xpack run --cache ...`), serve every look-up on every CPU it was given, with
# outputs bit-identical to no cache there; a CPU it dropped is served whole by a kept cache (the reason it
# gives). A re-run names the files of an earlier one it did not write. A program that cannot be packed fails
# it with nothing left in DIR; a usage error exits 2.
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
again=$d/again; mkdir -p "$again"; printf 'an earlier run' > "$again/qd8.cortex-a53.xpc"
bash "$bundle" --build "$build" --out "$again" --cpu max "$d/qd8.pte" > "$d/again.log" 2>&1 || { cat "$d/again.log"; fail "re-run: phone-bundle.sh failed"; }
[ "$(cat "$again/qd8.caches")" = qd8.max.xpc ] || fail "re-run: qd8.caches is $(cat "$again/qd8.caches")"
[ "$(cat "$again/qd8.cortex-a53.xpc")" = 'an earlier run' ] || fail "re-run: the earlier file was changed"
grep -q "qd8.cortex-a53.xpc is not in qd8.caches" "$d/again.log" || { cat "$d/again.log"; fail "re-run: the earlier file is not named"; }

# Failures: a file that is no program leaves nothing in DIR; no program at all is a usage error.
printf 'not a program' > "$d/bad.pte"
rc=0; bash "$bundle" --build "$build" --out "$d/bad_out" "$d/bad.pte" > "$d/bad.log" 2>&1 || rc=$?
[ $rc = 1 ] || { cat "$d/bad.log"; fail "a file that is no program: exit $rc, expected 1"; }
[ -z "$(ls -A "$d/bad_out")" ] || fail "a failed run left files: $(ls -A "$d/bad_out")"
rc=0; bash "$bundle" --out "$d/x" > /dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "no program: exit $rc, expected 2"
echo "PASS"
