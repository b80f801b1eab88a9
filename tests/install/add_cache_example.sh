#!/usr/bin/env bash
# docs/examples/cmake_pipeline against a temporary install: xpack_add_cache packs the model at build time,
# the cache verifies, the loader-only app opens it; a rebuild with nothing changed does nothing and leaves
# the cache untouched; touching the model, or a reinstalled xpack, packs again; a program with nothing to
# pack fails the build.
# Usage: add_cache_example.sh BUILD_DIR SOURCE_DIR GENMODEL C_COMPILER NINJA
source "$(dirname "$0")/lib.sh" "$@"

install_xpack
xpack="$XP_PREFIX/bin/xpack"
model="$XP_TMP/model.pte"
"$XP_GENMODEL" llm -o "$model" --size 1M > /dev/null
ex="$XP_TMP/example"
cache="$ex/model.xpc"
mtime() { stat -c %.9Y "$1"; }
# Makes $1 newer than $2 in the file system's clock (bash's -nt compares nanoseconds; the clock may be coarser).
touch_newer() {
  touch "$1"
  while [ ! "$1" -nt "$2" ]; do
    sleep 0.01
    touch "$1"
  done
}
build() { "$XP_NINJA" -C "$ex" > "$XP_TMP/build.log" 2>&1 || { cat "$XP_TMP/build.log"; fail "ninja -C example"; }; }

build_project "$XP_SOURCE/docs/examples/cmake_pipeline" "$ex" -DEXAMPLE_MODEL="$model"
grep -q "xpack: packing" "$ex.build.log" || { cat "$ex.build.log"; fail "the first build did not pack"; }
[ -f "$cache" ] || fail "no $cache after the build"
"$xpack" verify "$cache" --model "$model" || fail "the built cache does not verify against the model"
"$ex/model_app" || fail "the app did not accept the built cache"
if ldd "$ex/model_app" | grep zstd; then fail "the loader-only app (xpack::loader) needs zstd"; fi
first=$(mtime "$cache")
[ ! -e "$ex/model-transport.xpc" ] || fail "the default build made the EXCLUDE_FROM_ALL transport-form cache"

build
grep -q "ninja: no work to do." "$XP_TMP/build.log" || { cat "$XP_TMP/build.log"; fail "a rebuild with nothing changed did work"; }
[ "$(mtime "$cache")" = "$first" ] || fail "a rebuild with nothing changed rewrote the cache"
echo "no change: no work, cache untouched"

touch_newer "$model" "$cache"
build
grep -q "xpack: packing" "$XP_TMP/build.log" || { cat "$XP_TMP/build.log"; fail "touching the model did not pack again"; }
second=$(mtime "$cache")
[ "$second" != "$first" ] || fail "touching the model left the cache as it was"
echo "model touched: packed again"

# Another program at the same path: the new cache is packed from it (the app checks the program's identity).
"$XP_GENMODEL" llm -o "$model" --size 1M --seed 2 > /dev/null
touch_newer "$model" "$cache"
build
"$ex/model_app" || fail "after the model changed, the cache was not packed from the new program"
echo "model replaced: the cache follows it"

touch_newer "$xpack" "$cache"
build
grep -q "xpack: packing" "$XP_TMP/build.log" || { cat "$XP_TMP/build.log"; fail "a newer xpack did not pack again"; }
[ "$(mtime "$cache")" != "$second" ] || fail "a newer xpack left the cache as it was"
echo "xpack reinstalled: packed again"

# ZSTD: the transport form, on request. It verifies; the loader refuses it; inflated, it is the mappable cache.
"$XP_NINJA" -C "$ex" model_cache_transport > "$XP_TMP/build.log" 2>&1 || { cat "$XP_TMP/build.log"; fail "ninja model_cache_transport"; }
transport="$ex/model-transport.xpc"
"$xpack" verify "$transport" > /dev/null || fail "the transport-form cache does not verify"
if "$ex/model_app" "$model" "$transport" 2> /dev/null; then fail "the loader accepted the transport form"; fi
"$xpack" inflate "$transport" "$XP_TMP/inflated.xpc" > /dev/null || fail "xpack inflate"
cmp "$XP_TMP/inflated.xpc" "$cache" || fail "the inflated transport form differs from the mappable cache"
echo "ZSTD: transport form $(stat -c %s "$transport") bytes, mappable $(stat -c %s "$cache") bytes; inflates to the same file"

# A program with nothing that XNNPACK packs fails the build, and no older cache is left in its place.
"$XP_GENMODEL" bmm -o "$XP_TMP/bmm.pte" > /dev/null
cmake "$ex" -DEXAMPLE_MODEL="$XP_TMP/bmm.pte" > /dev/null
if "$XP_NINJA" -C "$ex" > "$XP_TMP/build.log" 2>&1; then cat "$XP_TMP/build.log"; fail "a program with nothing to pack built"; fi
grep -q "xpack pack. wrote no" "$XP_TMP/build.log" || { cat "$XP_TMP/build.log"; fail "no message for a program with nothing to pack"; }
grep -q "^nothing to pack: " "$XP_TMP/build.log" || { cat "$XP_TMP/build.log"; fail "the build log does not say why there was nothing to pack"; }
[ ! -e "$cache" ] || fail "a failed pack left the older cache in place"
echo "nothing to pack: the build fails, no cache"
echo "add_cache example: ok"
