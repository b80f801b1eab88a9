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
    sub="$build/tests/xpack-subgraphs"
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
    echo "== pack: sample XNNPACK subgraphs built in C (fully-connected fp32 / qc8w / qd8+qc4w, convolution,"
    echo "   depthwise, deconvolution, an LLM-like prefill+decode pair sharing weights) -> $out/demo.xpc"
    "$sub" pack "$out/demo.xpc"
    echo "== dump"
    "$xpack" dump "$out/demo.xpc"
    echo "== verify"
    "$xpack" verify "$out/demo.xpc"
    echo "== run without a cache (XNNPACK packs)"
    "$sub" run | tee "$out/nocache.txt"
    echo "== run with the cache (the loader serves packed weights from the mapping)"
    "$sub" run --cache "$out/demo.xpc" | tee "$out/cache.txt"
    if diff <(grep '^graph' "$out/nocache.txt" | sed -E 's/ create_us [0-9]+ lookups [0-9]+ hits [0-9]+ misses [0-9]+//') \
            <(grep '^graph' "$out/cache.txt" | sed -E 's/ create_us [0-9]+ lookups [0-9]+ hits [0-9]+ misses [0-9]+//') > /dev/null; then
      echo "== outputs are bit-identical with and without the cache"
    else
      echo "== OUTPUTS DIFFER"; exit 1
    fi
    ;;
  test)
    ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
    ;;
  *) echo "usage: tools/dev.sh demo|test|build" >&2; exit 2 ;;
esac
