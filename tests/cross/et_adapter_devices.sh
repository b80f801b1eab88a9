#!/usr/bin/env bash
# The phone app's whole story, under qemu-aarch64 as the CPUs of phones: stock ExecuTorch (cross-built over the
# same XNNPACK) with xpack's loader inside it (libpack/et_adapter), given the caches of one program packed as
# each CPU model, in a bundle. On each device CPU, xpack_et_adapter_attach_best must keep a file this CPU serves
# whole, every look-up must be served from that file's mapping, and outputs must equal ExecuTorch without any
# cache. The device's own cache comes last, so a file served otherwise on this CPU (another kernel choice, other
# keys) must be passed over, not merely never met.
# Arguments: the CPUs to pack as, then --on, then the CPUs to run as. A CPU is a qemu model, or MODEL:CORE,CORE...
# for a phone with two kinds of cores (tools/qemu-aarch64-device.sh): cortex-a76:cortex-a55,cortex-a76
# executes as a Cortex-A76 while /proc/cpuinfo shows a Cortex-A55 and a Cortex-A76, as on a big.LITTLE phone.
# Environment: XPACK and XPACK_GENMODEL (the qemu wrappers: they run as XPACK_QEMU_CPU), XPACK_BUILD_DIR (the
# cross build, installed for the harness), XPACK_TARGET_TOOLCHAIN, XPACK_EMULATOR, XNNPACK_PREFIX,
# XPACK_ET_VERSION, XPACK_REAL_TESTDATA. Exit 0/1/77.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${XPACK:?}" "${XPACK_GENMODEL:?}" "${XPACK_BUILD_DIR:?}" "${XPACK_TARGET_TOOLCHAIN:?}" "${XPACK_EMULATOR:?}"
fail() { echo "FAIL: $*"; exit 1; }
pack_cpus=()
while [ $# -gt 0 ] && [ "$1" != --on ]; do pack_cpus+=("$1"); shift; done
[ "${1:-}" = --on ] && shift
run_cpus=("$@")
[ ${#pack_cpus[@]} -ge 2 ] && [ ${#run_cpus[@]} -ge 1 ] || fail "usage: et_adapter_devices.sh PACK_CPU PACK_CPU... --on RUN_CPU..."
source "$here/../executorch/env.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/et_adapter_devices.XXXXXX")
trap 'rm -rf "$work"' EXIT
HX=$(et_build_adapter_harness "$work" "$XPACK_BUILD_DIR") || fail "installing the cross build or building et_harness_xpack for the target"
echo "et_harness_xpack for the target, built against the installed cross build and $ET_PREFIX"
# as CPU PROGRAM ARGS...: a target program run as that CPU
as() { local cpu=$1; shift; ${XPACK_EMULATOR} -cpu "$cpu" "$@"; }
hx() { local cpu=$1; shift; as "$cpu" "$HX" "$@"; }
target_xpack=$XPACK_BUILD_DIR/tools/xpack
file_of() { echo "$work/$1.${2//[:,]/_}.xpc"; } # file_of PROGRAM CPU: that CPU's cache of the program

source "$here/../executorch/harness_lines.sh" # xf, tf, cand, same

programs=()
for kind in qd8-qc8w fp16; do
  "$XPACK_GENMODEL" "$kind" -o "$work/$kind.pte" > /dev/null || fail "genmodel $kind"
  programs+=("$work/$kind.pte")
done
real=${XPACK_REAL_TESTDATA:-$here/../../../shared/testdata/real}
# Not small_cnn: its first inference, 0.2 s here, takes minutes under qemu as max (tests/cross/arm64_devices.sh).
for f in person_detect_int8 person_detect_fp32; do
  if [ -f "$real/$f.pte" ]; then programs+=("$real/$f.pte"); else echo "$f: not tested, $real/$f.pte is absent"; fi
done

runs=0 passed_over=0
for p in "${programs[@]}"; do
  name=$(basename "$p" .pte)
  for c in "${pack_cpus[@]}"; do
    # A CPU that cannot run the program (fp16 on a Cortex-A53: XNNPACK's status 5, unsupported hardware) has no
    # cache in the bundle; any other failure fails.
    if ! as "$c" "$target_xpack" pack "$p" -o "$(file_of "$name" "$c")" > "$work/$name.pack" 2>&1; then
      grep -q "no delegate could be packed.*(status 5: unsupported hardware)" "$work/$name.pack" || fail "$name: pack as $c: $(tail -3 "$work/$name.pack")"
      echo "$name: no cache for $c (XNNPACK does not support this program on it)"
    fi
  done
  for dev in "${run_cpus[@]}"; do
    hx "$dev" "$p" --input-scale 0.1 --no-weight-cache > "$work/base" 2> "$work/base.err" || fail "$name on $dev: no-cache run: $(cat "$work/base.err")"
    args=()
    for c in "${pack_cpus[@]}"; do [ "$c" = "$dev" ] || [ ! -f "$(file_of "$name" "$c")" ] || args+=(--xpack-cache "$(file_of "$name" "$c")"); done
    own=$(file_of "$name" "$dev")
    [ -f "$own" ] && args+=(--xpack-cache "$own")
    out=$work/$name.${dev//[:,]/_}.run
    hx "$dev" "$p" --input-scale 0.1 "${args[@]}" > "$out" 2> "$out.err" || fail "$name on $dev: adapter run: $(cat "$out.err")"
    chosen=$(sed -n 's/^xpack chosen=\([0-9]*\) of .*/\1/p' "$out")
    [ -n "$chosen" ] || fail "$name on $dev: the harness did not say which cache it kept"
    echo "$name on $dev: $(grep '^xpack chosen' "$out" | sed "s#$work/##"); lookups=$(xf "$out" lookups) hits=$(xf "$out" hits) from_file=$(tf "$out" from_file)"
    [ "$(cand "$out" "$chosen" entries_served)" = "$(cand "$out" "$chosen" entries)" ] ||
      fail "$name on $dev: the kept cache does not serve every entry here: $(grep '^xpack candidate' "$out")"
    [ "$(xf "$out" lookups)" -gt 0 ] && [ "$(xf "$out" misses)" = 0 ] && [ "$(xf "$out" hits)" = "$(xf "$out" lookups)" ] &&
      [ "$(tf "$out" from_file)" = "$(xf "$out" hits)" ] || fail "$name on $dev: not every look-up was served from the kept file"
    same "$out" "$work/base" || fail "$name on $dev: outputs differ from ExecuTorch without a cache"
    for ((i = 0; i < chosen; i++)); do
      [ "$(cand "$out" $i tried)" = 1 ] && [ "$(cand "$out" $i entries_served)" != "$(cand "$out" $i entries)" ] &&
        passed_over=$((passed_over + 1))
    done
    runs=$((runs + 1))
  done
done
echo "$runs adapter runs, $passed_over caches passed over as not served whole on the device's CPU"
# person_detect_int8 packed as max is keyed otherwise on a Cortex-A76 (docs/INTEGRATION.md, "Phones"): when both
# are in the lists, the chooser must have passed a file over at least once.
if [ -f "$real/person_detect_int8.pte" ] && [[ " ${pack_cpus[*]} " == *" max "* ]] && [[ " ${run_cpus[*]} " == *" cortex-a76 "* ]]; then
  [ "$passed_over" -gt 0 ] || fail "no cache was passed over: the chooser was not exercised"
fi
echo "PASS"
