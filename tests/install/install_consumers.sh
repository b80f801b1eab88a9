#!/usr/bin/env bash
# cmake --install into a temporary prefix, then use the install as an app would: the installed tool packs a
# generated model and serves it; docs/examples/integration_example.c is built against the install with
# find_package(xpack) and with a plain cc command line from pkg-config, and both binaries serve hits; the
# loader alone links from `pkg-config --static --libs xpack-loader` without zstd or the writer; a transport-form
# cache is inflated by a program linked from `pkg-config xpack-inflate` and then served.
# Usage: install_consumers.sh BUILD_DIR SOURCE_DIR GENMODEL C_COMPILER NINJA
source "$(dirname "$0")/lib.sh" "$@"

install_xpack
for f in bin/xpack lib/libxpack_loader.a lib/libxpack_writer.a lib/libxpack_pipeline.a include/xpack/xpack_loader.h \
         include/xpack/xpack.h include/xpack/xpack_pipeline.h \
         lib/cmake/xpack/xpackConfig.cmake lib/cmake/xpack/xpackConfigVersion.cmake lib/cmake/xpack/XpackAddCache.cmake \
         lib/pkgconfig/xpack-loader.pc lib/pkgconfig/xpack-inflate.pc lib/pkgconfig/xpack.pc; do
  [ -e "$XP_PREFIX/$f" ] || fail "cmake --install did not install $f"
done
xpack="$XP_PREFIX/bin/xpack"

# The installed tool packs a generated program and serves every look-up from the cache.
"$XP_GENMODEL" llm -o "$XP_TMP/model.pte" --size 1M > /dev/null
"$xpack" pack "$XP_TMP/model.pte" -o "$XP_TMP/model.xpc"
"$xpack" run "$XP_TMP/model.pte" --cache "$XP_TMP/model.xpc" --json > "$XP_TMP/run.json"
python3 - "$XP_TMP/run.json" <<'PY' || fail "installed xpack run --cache"
import json, sys
r = json.load(open(sys.argv[1]))
print(f"installed xpack run --cache: {r['lookups']} look-ups, {r['hits']} hits, {r['misses']} misses")
sys.exit(0 if r["lookups"] > 0 and r["hits"] == r["lookups"] and r["failed"] == 0 else 1)
PY

# find_package(xpack): the integration example, packing and serving its own cache.
build_project "$XP_SOURCE/tests/install/consumer" "$XP_TMP/consumer" -DXPACK_EXAMPLES="$XP_SOURCE/docs/examples"
echo "--- find_package(xpack) build:"
bash "$XP_SOURCE/tests/core/integration_example.sh" "$XP_TMP/consumer/integration_example"

# pkg-config, plain cc command lines.
export PKG_CONFIG_PATH="$XP_PREFIX/lib/pkgconfig"
pack_flags=$(pkg-config --cflags --libs xpack) || fail "pkg-config xpack"
echo "--- pkg-config --cflags --libs xpack: $pack_flags"
# shellcheck disable=SC2086  # the flags are words
"$XP_CC" -std=c11 -o "$XP_TMP/integration_example_pc" "$XP_SOURCE/docs/examples/integration_example.c" $pack_flags \
  || fail "linking the integration example with pkg-config xpack"
bash "$XP_SOURCE/tests/core/integration_example.sh" "$XP_TMP/integration_example_pc"

loader_flags=$(pkg-config --static --cflags --libs xpack-loader) || fail "pkg-config xpack-loader"
echo "--- pkg-config --static --cflags --libs xpack-loader: $loader_flags"
case " $loader_flags " in
  *zstd* | *xpack_pack* | *xpack_et*) fail "the loader's link line drags in more than the loader" ;;
esac
# shellcheck disable=SC2086
"$XP_CC" -std=c11 -o "$XP_TMP/model_app_pc" "$XP_SOURCE/docs/examples/cmake_pipeline/model_app.c" $loader_flags \
  || fail "linking the loader-only app with pkg-config xpack-loader"
"$XP_TMP/model_app_pc" "$XP_TMP/model.pte" "$XP_TMP/model.xpc" || fail "the loader-only app refused the installed tool's cache"
if ldd "$XP_TMP/model_app_pc" | grep zstd; then fail "the loader-only app needs zstd"; fi

# The transport form: packed with --zstd by the installed tool, refused by the loader, inflated by a program
# linked from `pkg-config xpack-inflate` (no writer), then served.
"$xpack" -q pack "$XP_TMP/model.pte" --zstd -o "$XP_TMP/transport.xpc"
if "$XP_TMP/model_app_pc" "$XP_TMP/model.pte" "$XP_TMP/transport.xpc" 2> "$XP_TMP/refused.txt"; then
  fail "the loader accepted a transport-form cache"
fi
grep -q "inflate" "$XP_TMP/refused.txt" || { cat "$XP_TMP/refused.txt"; fail "the refusal does not name xpack inflate"; }
inflate_flags=$(pkg-config --cflags --libs xpack-inflate) || fail "pkg-config xpack-inflate"
echo "--- pkg-config --cflags --libs xpack-inflate: $inflate_flags"
case " $inflate_flags " in *xpack_pack* | *xpack_et*) fail "the inflater's link line drags in the writer" ;; esac
cat > "$XP_TMP/inflate.c" <<'C'
#include <stdio.h>
#include "xpack_transport.h"
int main(int argc, char** argv) {
  xpack_error err;
  if (argc != 3 || xpack_inflate_file(argv[1], argv[2], NULL, &err) != XPACK_OK) {
    fprintf(stderr, "%s\n", argc == 3 ? err.message : "usage: inflate IN OUT");
    return 1;
  }
  return 0;
}
C
# shellcheck disable=SC2086
"$XP_CC" -std=c11 -o "$XP_TMP/inflate_pc" "$XP_TMP/inflate.c" $inflate_flags || fail "linking an inflater with pkg-config xpack-inflate"
"$XP_TMP/inflate_pc" "$XP_TMP/transport.xpc" "$XP_TMP/inflated.xpc" || fail "inflating the transport form"
cmp "$XP_TMP/inflated.xpc" "$XP_TMP/model.xpc" || fail "the inflated cache differs from the one packed without --zstd"
"$XP_TMP/model_app_pc" "$XP_TMP/model.pte" "$XP_TMP/inflated.xpc" || fail "the loader refused the inflated cache"
echo "install consumers: ok"
