#!/usr/bin/env bash
# One entry point for people and CI:
#   tools/dev.sh demo   set up dependencies, build, and run the main job on a sample the project makes itself
#   tools/dev.sh test   set up dependencies, build, and run every test
#   tools/dev.sh build  set up dependencies and build only
#   ... --pin NAME      the same over the XNNPACK that an ExecuTorch release pins (cmake/xnnpack_pins.txt;
#                       needs ../shared/vendor), in build-NAME unless BUILD_DIR says otherwise
# Environment: BUILD_DIR (default ./build), XNNPACK_PREFIX (use an existing XNNPACK), XPACK_SKIP_APT=1,
#   XPACK_XNNPACK_PIN (same as --pin), XPACK_OTHER_XNNPACK_XPACK (an xpack built with another XNNPACK, for
#   the test model_cross_xnnpack; skipped without it).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mode=${1:-test}
[ $# -gt 0 ] && shift
pin=${XPACK_XNNPACK_PIN:-}
case "${1:-}" in
  --pin) pin=${2:?--pin needs a name (tools/setup-deps.sh --list-pins)} ;;
  --pin=*) pin=${1#--pin=} ;;
  "") ;;
  *) echo "usage: tools/dev.sh demo|test|build [--pin NAME]" >&2; exit 2 ;;
esac
build=${BUILD_DIR:-$root/build${pin:+-$pin}}

prefix_line=$(XPACK_XNNPACK_PIN="$pin" tools/setup-deps.sh | tail -n 1)
export XNNPACK_PREFIX=${prefix_line#XNNPACK_PREFIX=}

mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXNNPACK_PREFIX="$XNNPACK_PREFIX" \
  -DXPACK_OTHER_XNNPACK_XPACK="${XPACK_OTHER_XNNPACK_XPACK:-}" \
  > "$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
ninja -C "$build" > "$build/build.log" 2>&1 || { tail -n 60 "$build/build.log"; exit 1; }
echo "dev: built in $build ($(tail -n 1 <<<"$("$build/tools/xpack" --version)"))"

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
    ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
    ;;
  *) echo "usage: tools/dev.sh demo|test|build [--pin NAME]" >&2; exit 2 ;;
esac
