#!/usr/bin/env bash
# One entry point for people and CI:
#   tools/dev.sh demo   set up dependencies, build, and run the main job on a sample the project makes itself
#   tools/dev.sh test   set up dependencies, build, and run every test
#   tools/dev.sh build  set up dependencies and build only
#   ... --pin NAME      the same over the XNNPACK that an ExecuTorch release pins (cmake/xnnpack_pins.txt;
#                       needs ../shared/vendor), in build-NAME unless BUILD_DIR says otherwise
#   ... --arch aarch64  cross-built for 64-bit Arm Linux (with a pin), in build-NAME-aarch64; its tests run
#                       xpack under qemu-aarch64 as the CPUs of phones (tests/cross)
#   ... --sanitize      built with ASan and UBSan (-DXPACK_SANITIZE=ON), in build-sanitize (build-NAME-sanitize
#                       with a pin); tests run with ASAN_OPTIONS=detect_leaks=1 and
#                       UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 unless those are set, so that a leak or
#                       undefined behaviour fails the test. Not with --arch: qemu-user does not run an ASan binary.
# Environment: BUILD_DIR (default ./build), XNNPACK_PREFIX (use an existing XNNPACK), XPACK_SKIP_APT=1,
#   XPACK_XNNPACK_PIN (same as --pin), XPACK_TARGET_ARCH (same as --arch), XPACK_HOST_XPACK (an xpack of this
#   machine, for the cross tests: it must refuse an aarch64 cache), XPACK_OTHER_XNNPACK_XPACK (an xpack built with another XNNPACK, for
#   the test model_cross_xnnpack; skipped without it), XPACK_CTEST_ARGS (more ctest arguments for `test`, e.g.
#   "-LE format_matrix").
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mode=${1:-test}
[ $# -gt 0 ] && shift
pin=${XPACK_XNNPACK_PIN:-}
arch=${XPACK_TARGET_ARCH:-$(uname -m)}
sanitize=OFF
usage() { echo "usage: tools/dev.sh demo|test|build [--pin NAME] [--arch aarch64] [--sanitize]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --pin) pin=${2:?--pin needs a name (tools/setup-deps.sh --list-pins)}; shift 2 ;;
    --pin=*) pin=${1#--pin=}; shift ;;
    --arch) arch=${2:?--arch needs a name}; shift 2 ;;
    --arch=*) arch=${1#--arch=}; shift ;;
    --sanitize) sanitize=ON; shift ;;
    *) usage ;;
  esac
done
cross=0; [ "$arch" = "$(uname -m)" ] || cross=1
[ $cross = 0 ] || [ "$mode" != demo ] || { echo "dev: demo runs on this machine's architecture only" >&2; exit 2; }
[ $cross = 0 ] || [ $sanitize = OFF ] || { echo "dev: --sanitize builds for this machine only (qemu-user does not run ASan)" >&2; exit 2; }
build=${BUILD_DIR:-$root/build${pin:+-$pin}$([ $cross = 0 ] || echo "-$arch")$([ $sanitize = OFF ] || echo "-sanitize")}

prefix_line=$(XPACK_XNNPACK_PIN="$pin" XPACK_TARGET_ARCH="$arch" tools/setup-deps.sh | tail -n 1)
export XNNPACK_PREFIX=${prefix_line#XNNPACK_PREFIX=}

mkdir -p "$build"
target_args=()
if [ $cross = 1 ]; then
  # The prefix holds everything the target links (XNNPACK, cpuinfo, pthreadpool, zstd, xxHash): searched as a
  # root of the target's files, beside the cross sysroot.
  target_args=(-DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/$arch-linux-gnu.cmake" -DCMAKE_FIND_ROOT_PATH="$XNNPACK_PREFIX"
    -DXPACK_HOST_XPACK="${XPACK_HOST_XPACK:-}")
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXNNPACK_PREFIX="$XNNPACK_PREFIX" \
  -DXPACK_OTHER_XNNPACK_XPACK="${XPACK_OTHER_XNNPACK_XPACK:-}" -DXPACK_SANITIZE=$sanitize "${target_args[@]}" \
  > "$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
ninja -C "$build" > "$build/build.log" 2>&1 || { tail -n 60 "$build/build.log"; exit 1; }
if [ $cross = 1 ]; then
  # qemu/xpack: the build's own wrapper (tests/cross/tests.cmake), qemu as the toolchain file sets it up.
  echo "dev: built for $arch in $build ($(tail -n 1 <<<"$("$build/qemu/xpack" --version)"))"
else
  echo "dev: built in $build ($(tail -n 1 <<<"$("$build/tools/xpack" --version)"))"
fi

case "$mode" in
  build) ;;
  demo)
    xpack="$build/tools/xpack"
    gen="$build/xpack-genmodel"
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
    echo "== generate: an LLM-like ExecuTorch program (methods prefill and decode sharing every layer's"
    echo "   fully-connected weights by named key, 64 MiB of fp32 weights) -> $out/llm.pte"
    "$gen" llm --size 64M -o "$out/llm.pte"
    echo "== pack"
    "$xpack" pack "$out/llm.pte" -o "$out/llm.xpc"
    echo "== verify (structure, every checksum; then re-pack and compare, run with and without the cache)"
    "$xpack" verify "$out/llm.xpc" --model "$out/llm.pte"
    echo "== dump (first lines)"
    "$xpack" dump "$out/llm.xpc" > "$out/dump.txt"
    head -n 16 "$out/dump.txt"
    echo "== run without the cache: XNNPACK packs every weight"
    "$xpack" run "$out/llm.pte"
    echo "== run with the cache: the loader serves packed weights from the mapping"
    "$xpack" run "$out/llm.pte" --cache "$out/llm.xpc"
    ;;
  test)
    if [ $sanitize = ON ]; then
      export ASAN_OPTIONS=${ASAN_OPTIONS-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS-halt_on_error=1:print_stacktrace=1}
    fi
    # shellcheck disable=SC2086 # XPACK_CTEST_ARGS is a list of arguments
    ctest --test-dir "$build" --output-on-failure -j"$(nproc)" ${XPACK_CTEST_ARGS:-}
    ;;
  *) usage ;;
esac
