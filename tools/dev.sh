#!/usr/bin/env bash
# One entry point for people and CI:
#   tools/dev.sh demo   set up dependencies, build, and run the main job on a sample the project makes itself
#   tools/dev.sh test   set up dependencies, build, and run every test
#   tools/dev.sh build  set up dependencies and build only
# Environment: BUILD_DIR (default ./build), XNNPACK_PREFIX (use an existing XNNPACK), XPACK_SKIP_APT=1.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${BUILD_DIR:-$root/build}
mode=${1:-test}

prefix_line=$(tools/setup-deps.sh | tail -n 1)
export XNNPACK_PREFIX=${prefix_line#XNNPACK_PREFIX=}

mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXNNPACK_PREFIX="$XNNPACK_PREFIX" \
  > "$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
ninja -C "$build" > "$build/build.log" 2>&1 || { tail -n 60 "$build/build.log"; exit 1; }
echo "dev: built in $build"

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
  *) echo "usage: tools/dev.sh demo|test|build" >&2; exit 2 ;;
esac
