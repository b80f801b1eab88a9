# Sourced by the ExecuTorch test and benchmark scripts. Makes the real ExecuTorch runtime and et_harness
# available for one (ExecuTorch version, XNNPACK) pair and sets:
#   ET_PREFIX    the runtime prefix (tools/setup-executorch.sh; built once, cached)
#   ET_HARNESS   the et_harness binary built over it
# Inputs (environment):
#   XNNPACK_PREFIX      the XNNPACK xpack was built with (the ExecuTorch runtime is built over the same)
#   XPACK_ET_VERSION    v1.4.0 (default) or main-cff6f4dd
#   XPACK_ET_BUILD_DIR  where to build harnesses (default: ~/.cache/xpack-deps/et-harness)
#   XPACK_TARGET_TOOLCHAIN  cross builds (tests/cross): runtime and harness are built with this toolchain
#                       file, and ET_HARNESS runs the harness under qemu as the CPU model XPACK_QEMU_CPU
# Exits 77 (the caller's test skips) when the vendored sources are absent.
et_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
et_rc=0
et_out=$("$et_repo/tools/setup-executorch.sh" ${XNNPACK_PREFIX:+"$XNNPACK_PREFIX"}) || et_rc=$?
if [ "$et_rc" -eq 77 ]; then
  echo "SKIP: the vendored ExecuTorch sources (../shared/vendor or XPACK_VENDOR_DIR) are absent"; exit 77
elif [ "$et_rc" -ne 0 ]; then
  echo "tools/setup-executorch.sh failed ($et_rc)" >&2; exit 1
fi
et_line=$(printf '%s\n' "$et_out" | tail -n 1)
ET_PREFIX=${et_line#EXECUTORCH_PREFIX=}
[ -f "$ET_PREFIX/et.env" ] || { echo "tools/setup-executorch.sh printed no usable prefix: $et_line" >&2; exit 1; }
et_xnn=$(sed -n 's/^XNNPACK_PREFIX=//p' "$ET_PREFIX/et.env")
et_hdir="${XPACK_ET_BUILD_DIR:-${XPACK_DEPS_CACHE:-${HOME:-/root}/.cache/xpack-deps}/et-harness}/$(basename "$ET_PREFIX")-$(cat "$et_repo/tests/executorch/et_harness.cpp" "$et_repo/tests/executorch/portable_kernels.cpp" "$et_repo/tests/executorch/harness/CMakeLists.txt" | sha256sum | cut -c1-8)"
ET_HARNESS="$et_hdir/et_harness"
if [ ! -x "$ET_HARNESS" ]; then
  mkdir -p "$et_hdir"
  (
    flock 8
    if [ ! -x "$ET_HARNESS" ]; then
      cmake -S "$et_repo/tests/executorch/harness" -B "$et_hdir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DEXECUTORCH_PREFIX="$ET_PREFIX" -DXNNPACK_PREFIX="$et_xnn" \
        ${XPACK_TARGET_TOOLCHAIN:+-DCMAKE_TOOLCHAIN_FILE="$XPACK_TARGET_TOOLCHAIN" -DCMAKE_FIND_ROOT_PATH="$et_xnn;$ET_PREFIX"} \
        > "$et_hdir/configure.log" 2>&1 \
        || { tail -20 "$et_hdir/configure.log" >&2; exit 1; }
      ninja -C "$et_hdir" > "$et_hdir/build.log" 2>&1 || { tail -40 "$et_hdir/build.log" >&2; exit 1; }
    fi
  ) 8>"$et_hdir.lock" || { echo "building et_harness failed" >&2; exit 1; }
fi
if [ -n "${XPACK_TARGET_TOOLCHAIN:-}" ]; then
  # No binfmt_misc here: the harness runs through qemu, as the CPU model the test names.
  : "${XPACK_EMULATOR:?cross: XPACK_EMULATOR names qemu and its sysroot}"
  et_target_harness=$ET_HARNESS
  et_harness_qemu() { ${XPACK_EMULATOR} -cpu "${XPACK_QEMU_CPU:-max}" "$et_target_harness" "$@"; }
  ET_HARNESS=et_harness_qemu
fi
export ET_PREFIX ET_HARNESS

# et_build_adapter_harness WORK XPACK_BUILD: installs that xpack build into WORK/xpack (cmake --install) and
# builds et_harness_xpack against it in WORK/hb, as an app would (find_package(xpack)); prints its path. With
# XPACK_TARGET_TOOLCHAIN (a cross build of xpack), the harness is built for the target too: run it under qemu.
# Returns 1, the build's last lines on stderr, when either step fails.
et_build_adapter_harness() {
  local work=$1 build=$2
  cmake --install "$build" --prefix "$work/xpack" > "$work/install.log" 2>&1 || { cat "$work/install.log" >&2; return 1; }
  cmake -S "$et_repo/tests/executorch/harness" -B "$work/hb" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DEXECUTORCH_PREFIX="$ET_PREFIX" -DXNNPACK_PREFIX="$et_xnn" -Dxpack_DIR="$work/xpack/lib/cmake/xpack" \
    ${XPACK_TARGET_TOOLCHAIN:+-DCMAKE_TOOLCHAIN_FILE="$XPACK_TARGET_TOOLCHAIN" -DCMAKE_FIND_ROOT_PATH="$et_xnn;$ET_PREFIX;$work/xpack"} \
    > "$work/hb.log" 2>&1 && ninja -C "$work/hb" et_harness_xpack >> "$work/hb.log" 2>&1 \
    || { tail -30 "$work/hb.log" >&2; return 1; }
  echo "$work/hb/et_harness_xpack"
}
