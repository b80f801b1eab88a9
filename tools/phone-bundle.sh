#!/usr/bin/env bash
# Packs ExecuTorch programs into the caches an app bundle for phones needs: one per class of CPU, packed by an
# aarch64 xpack over the XNNPACK the app's ExecuTorch pins, under qemu as each CPU (docs/INTEGRATION.md, "caches
# for phones"), without the classes another kept cache already serves whole.
#
#   tools/phone-bundle.sh --out DIR [--pin NAME] [--build DIR] [--cpu CPU ...] MODEL.pte [MODEL2.pte ...] [--data W.ptd ...]
#
# --cpu, in order of preference (default: max, cortex-a76, cortex-a53: Armv9-class, Armv8.2 and Armv8.0 cores):
# a qemu CPU model, or MODEL:CORE,CORE... for a phone with two kinds of cores (tools/qemu-aarch64-device.sh).
# Each CPU's cache is packed as that CPU; then, in that order, a cache is dropped when a cache kept before it is
# served whole on its CPU (`xpack verify` there: every packing family packs and keys alike). DIR receives
# NAME.CPU.xpc for each kept CPU (NAME: the first program's name, CPU with ':' and ',' as '_') and NAME.caches,
# the kept files in order, one per line: what the app passes to xpack_cache_open_best or
# xpack_et_adapter_attach_best. Everything is written in a locked work folder inside DIR and renamed into place
# at the end, once every place is checked (a link or a non-file there fails the run); DIR keeps nothing of a
# failed run (and is removed if the run made it and it is empty), and a later run removes the work folder of a
# killed one. Other NAME.*.xpc files already in DIR are left as they are and named on stderr. Programs with
# nothing to pack: exit 0, nothing written.
# --pin defaults to 1adaa7c7 (ExecuTorch 1.3 to 1.4); --build to build-PIN-aarch64, built with tools/dev.sh
# when it holds no xpack. Exit 0, 1 (a pack or a check failed), 2 (usage).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out= pin=1adaa7c7 build= cpus=() models=()
usage() { sed -n '6p' "$0" | sed 's/^#  *//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    --pin) [ $# -ge 2 ] || usage; pin=$2; shift 2 ;;
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    --cpu) [ $# -ge 2 ] || usage; cpus+=("$2"); shift 2 ;;
    --data) [ $# -ge 2 ] || usage; models+=(--data "$2"); shift 2 ;;
    -*) usage ;;
    *) models+=("$1"); shift ;;
  esac
done
[ -n "$out" ] && [ ${#models[@]} -gt 0 ] && [[ ${models[0]} == *.pte ]] || usage
[ ${#cpus[@]} -gt 0 ] || cpus=(max cortex-a76 cortex-a53)
build=${build:-$root/build-$pin-aarch64}
xpack=$build/tools/xpack
if [ ! -x "$xpack" ]; then
  echo "phone-bundle: no aarch64 xpack in $build: building it (tools/dev.sh build --pin $pin --arch aarch64)" >&2
  BUILD_DIR=$build "$root/tools/dev.sh" build --pin "$pin" --arch aarch64 >&2
fi
as() { local cpu=$1; shift; "$root/tools/qemu-aarch64-device.sh" -cpu "$cpu" "$@"; } # the toolchain file's sysroot

name=$(basename "${models[0]}" .pte)
if [ -e "$out" ] && [ ! -d "$out" ]; then echo "phone-bundle: --out $out is not a folder" >&2; exit 2; fi
made_out=0 wrote=0; [ -d "$out" ] || made_out=1
mkdir -p "$out"
# A run killed outright (SIGKILL) leaves its work folder: the next run removes those whose lock is free.
for old in "$out"/.phone-bundle.??????; do
  [ -f "$old/lock" ] || continue
  if (exec 9< "$old/lock" && flock -n 9); then rm -rf "$old" && echo "phone-bundle: removed $old, left by a killed run" >&2; fi
done
work=$(mktemp -d "$out/.phone-bundle.XXXXXX")
exec 9> "$work/lock-new"; flock -n 9; mv "$work/lock-new" "$work/lock" # locked before it has the name looked for
finish() {
  local rc=$?
  rm -rf "$work"
  [ $wrote = 1 ] || [ $made_out = 0 ] || rmdir "$out" 2> /dev/null || true # a folder this run made, if it wrote nothing
  return $rc
}
trap finish EXIT
file_of() { echo "$name.${1//[:,]/_}.xpc"; }
for cpu in "${cpus[@]}"; do
  if ! as "$cpu" "$xpack" pack "${models[@]}" -o "$work/$(file_of "$cpu")" > "$work/pack.log" 2>&1; then
    cat "$work/pack.log" >&2
    echo "phone-bundle: packing as $cpu failed" >&2; exit 1
  fi
  if [ ! -f "$work/$(file_of "$cpu")" ]; then # pack's "nothing to pack" (exit 0): nothing to bundle either
    cat "$work/pack.log" >&2
    echo "phone-bundle: nothing to pack as $cpu; $out is left as it was"
    exit 0
  fi
  echo "packed as $cpu: $(file_of "$cpu") ($(stat -c %s "$work/$(file_of "$cpu")") bytes)"
done

kept=()
for cpu in "${cpus[@]}"; do
  by=
  for k in "${kept[@]+"${kept[@]}"}"; do
    # exit 0: the file is sound and this CPU serves every entry; 1: not (the report says why); else a failure.
    rc=0; as "$cpu" "$xpack" verify "$work/$(file_of "$k")" > "$work/verify.log" 2>&1 || rc=$?
    [ $rc -le 1 ] || { cat "$work/verify.log" >&2; echo "phone-bundle: verify as $cpu failed ($rc)" >&2; exit 1; }
    [ $rc = 0 ] && { by=$k; break; }
  done
  if [ -n "$by" ]; then
    echo "$cpu: served whole by the cache packed as $by; not kept"
    rm -f "$work/$(file_of "$cpu")"
  else
    kept+=("$cpu")
  fi
done
: > "$work/$name.caches"
for k in "${kept[@]}"; do echo "$(file_of "$k")" >> "$work/$name.caches"; done
# Every place is checked before anything is moved, so that a failure leaves DIR as it was: each move is then a
# rename inside DIR, and the list goes last.
places=("$out/$name.caches"); for k in "${kept[@]}"; do places+=("$out/$(file_of "$k")"); done
for dest in "${places[@]}"; do
  if [ -L "$dest" ] || { [ -e "$dest" ] && [ ! -f "$dest" ]; }; then
    echo "phone-bundle: $dest is $( [ -L "$dest" ] && echo "a symbolic link" || echo "not a regular file"): not replaced; nothing was written" >&2
    exit 1
  fi
done
for k in "${kept[@]}"; do mv -f "$work/$(file_of "$k")" "$out/"; done
mv -f "$work/$name.caches" "$out/"
wrote=1
echo "kept ${#kept[@]} of ${#cpus[@]}: $(tr '\n' ' ' < "$out/$name.caches")(in $out/$name.caches)"
# Files of an earlier run with other CPUs stay (they may be someone else's): named, so that nobody ships them.
for f in "$out/$name".*.xpc; do
  [ -e "$f" ] || continue
  grep -qxF "$(basename "$f")" "$out/$name.caches" ||
    echo "phone-bundle: $f is not in $name.caches (an earlier run's?): the app does not need it" >&2
done
