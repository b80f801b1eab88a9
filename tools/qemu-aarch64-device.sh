#!/usr/bin/env bash
# Runs an aarch64 Linux program under qemu-user as a device whose every CPU is one qemu CPU model (or shows a
# phone's mix of cores): how this repository packs caches for phones on an x86-64 machine (docs/INTEGRATION.md)
# and runs tests/cross.
#
#   qemu-aarch64-device.sh [--qemu QEMU] [--sysroot DIR] -cpu MODEL[:CORE,CORE...] PROGRAM [ARGS...]
#
# MODEL:CORE,CORE...: a phone's mix of cores (big.LITTLE), as /proc/cpuinfo shows them: CPU n is CORE number n
# modulo their count, e.g. cortex-a76:cortex-a55,cortex-a76 on two CPUs. qemu still executes MODEL's
# instructions on every CPU (it emulates one model), so name cores of MODEL's architecture level: cortex-a55
# (which qemu 7.2 does not emulate, ARMv8.2 like cortex-a76) with cortex-a76. Without cores every CPU is MODEL.
# The scripts that take a CPU (tests/cross, tools/phone-bundle.sh) pass it here as it is.
# Why not qemu-aarch64 alone: qemu-user shows the program the build machine's /proc/cpuinfo and
# /sys/devices/system/cpu. XNNPACK's CPU detection (cpuinfo) takes the CPU's features from the auxiliary
# vector, which qemu sets from MODEL, but its microarchitecture from /proc/cpuinfo, where it finds an x86 CPU
# and no "CPU part"; and since cpuinfo 6882af58 (XNNPACK 92a7ad50, ExecuTorch main) it reads each CPU's L2
# from sysfs, finds the x86 machine's, cannot reconcile it with what it decoded and dies (a write through a
# NULL array of L2 descriptions) before XNNPACK is initialized. So this script gives qemu a prefix (-L) that
# holds the cross sysroot and, in front of the machine's files:
#   - /proc/cpuinfo: one entry per CPU the machine has, each with MODEL's MIDR (implementer, variant, part,
#     revision), as an arm64 kernel prints it;
#   - /sys/devices/system/cpu/cpuN/cache/index2/level: 0, so no CPU has a described L2, as under a kernel
#     that does not publish its cache topology.
# The prefix is made once per content, in XPACK_QEMU_DEVICE_DIR (default: qemu-device in the dependency cache
# of tools/setup-deps.sh, XPACK_DEPS_CACHE or ~/.cache/xpack-deps), and shared by every run after.
#
# QEMU defaults to qemu-aarch64 on PATH, DIR to /usr/aarch64-linux-gnu (Debian's cross sysroot). Exit 2 for a
# usage error or a CPU model this script has no MIDR for; otherwise qemu's (the program's) exit status.
set -euo pipefail
qemu=qemu-aarch64 sysroot=/usr/aarch64-linux-gnu model= cores=
usage() { echo "usage: $0 [--qemu QEMU] [--sysroot DIR] -cpu MODEL[:CORE,CORE...] PROGRAM [ARGS...]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --qemu) [ $# -ge 2 ] || usage; qemu=$2; shift 2 ;;
    --sysroot) [ $# -ge 2 ] || usage; sysroot=$2; shift 2 ;;
    -cpu) [ $# -ge 2 ] || usage; model=${2%%:*}; [[ $2 != *:* ]] || cores=${2#*:}; shift 2 ;;
    *) break ;;
  esac
done
[ -n "$model" ] && [ $# -ge 1 ] || usage
[ -d "$sysroot/lib" ] || { echo "$0: $sysroot/lib: no aarch64 sysroot there (tools/setup-deps.sh --arch aarch64)" >&2; exit 2; }

# MIDR_EL1 of qemu 7.2's aarch64 CPU models, as the emulated CPUs themselves report it (read with mrs under
# qemu-aarch64 -cpu MODEL). `max` is qemu's own: implementer 0, part 0x051 ('Q'). cortex-a55 (r2p0) is for
# the cores after MODEL only: qemu 7.2 does not emulate it.
midr_of() {
  case "$1" in
    a64fx) echo 0x461f0010 ;;
    cortex-a35) echo 0x411fd040 ;;
    cortex-a53) echo 0x410fd034 ;;
    cortex-a55) [ "$2" = core ] && echo 0x412fd050 ;;
    cortex-a57) echo 0x411fd070 ;;
    cortex-a72) echo 0x410fd083 ;;
    cortex-a76) echo 0x414fd0b1 ;;
    neoverse-n1) echo 0x414fd0c1 ;;
    max) echo 0x000f0510 ;;
  esac
}
unknown() {
  echo "$0: no MIDR known for the CPU model '$1' (known: a64fx cortex-a35 cortex-a53 cortex-a57 cortex-a72" \
       "cortex-a76 neoverse-n1 max$2)" >&2; exit 2
}
midr=$(midr_of "$model" cpu) || true
[ -n "$midr" ] || unknown "$model" ""
core_midrs=()
if [ -n "$cores" ]; then
  IFS=, read -r -a core_names <<< "$cores"
  for c in "${core_names[@]}"; do
    m=$(midr_of "$c" core) || true
    [ -n "$m" ] || unknown "$c" "; for cores after MODEL: also cortex-a55"
    core_midrs+=("$m")
  done
else
  core_midrs=("$midr")
fi

# The CPUs the machine has (a list such as 0-1 or 0,2-5): the program sees as many as it can run on.
cpus=()
IFS=, read -r -a ranges < /sys/devices/system/cpu/present
for range in "${ranges[@]}"; do
  first=${range%-*} last=${range#*-}
  for ((n = first; n <= last; n++)); do cpus+=("$n"); done
done

if [ ${#cpus[@]} -lt ${#core_midrs[@]} ]; then
  echo "$0: -cpu names ${#core_midrs[@]} cores, but this machine has ${#cpus[@]} CPUs to show them on" >&2; exit 2
fi
cpuinfo=$(for i in "${!cpus[@]}"; do
  n=${cpus[$i]} midr=${core_midrs[$((i % ${#core_midrs[@]}))]}
  printf 'processor\t: %d\nCPU implementer\t: 0x%02x\nCPU architecture: 8\nCPU variant\t: 0x%x\nCPU part\t: 0x%03x\nCPU revision\t: %d\n\n' \
    "$n" $(((midr >> 24) & 0xff)) $(((midr >> 20) & 0xf)) $(((midr >> 4) & 0xfff)) $((midr & 0xf))
done)
key=$(printf '%s\n%s\n%s\n' "$sysroot" "$(ls "$sysroot")" "$cpuinfo" | sha256sum | cut -c1-12)
base=${XPACK_QEMU_DEVICE_DIR:-${XPACK_DEPS_CACHE:-${HOME:-/root}/.cache/xpack-deps}/qemu-device}
prefix=$base/$model-$key
if [ ! -d "$prefix" ]; then
  mkdir -p "$base"
  tmp=$(mktemp -d "$base/.$model-XXXXXX")
  for entry in "$sysroot"/*; do ln -s "$entry" "$tmp/"; done
  mkdir -p "$tmp/proc"
  printf '%s\n' "$cpuinfo" > "$tmp/proc/cpuinfo"
  for n in "${cpus[@]}"; do
    mkdir -p "$tmp/sys/devices/system/cpu/cpu$n/cache/index2"
    echo 0 > "$tmp/sys/devices/system/cpu/cpu$n/cache/index2/level"
  done
  chmod 755 "$tmp"
  # Another run may have made it meanwhile: its prefix is the same, keep it.
  mv -T "$tmp" "$prefix" 2> /dev/null || rm -rf "$tmp"
fi
exec "$qemu" -L "$prefix" -cpu "$model" "$@"
