#!/usr/bin/env bash
# cmake --install into a temporary prefix, then use the install as an app would: the installed tool packs a
# generated model and serves it; docs/examples/integration_example.c is built against the install with
# find_package(xpack) and with a plain cc command line from pkg-config, and both binaries serve hits; the
# loader alone links from `pkg-config --static --libs xpack-loader` and from find_package(xpack COMPONENTS loader)
# without zstd or the writer; a transport-form cache is inflated by a program linked from `pkg-config
# xpack-inflate` and by one built with find_package(xpack COMPONENTS inflate) where no XNNPACK can be found,
# neither holding the loader or XNNPACK, and then served; the ExecuTorch adapter links from find_package(xpack
# COMPONENTS et_adapter) and from `pkg-config xpack-et-adapter` and attaches the cache whole.
# Usage: install_consumers.sh BUILD_DIR SOURCE_DIR GENMODEL C_COMPILER NINJA
source "$(dirname "$0")/lib.sh" "$@"

install_xpack
for f in bin/xpack lib/libxpack_common.a lib/libxpack_loader.a lib/libxpack_inflate.a lib/libxpack_writer.a \
         lib/libxpack_pipeline.a include/xpack/xpack_loader.h include/xpack/xpack.h include/xpack/xpack_transport.h \
         include/xpack/xpack_pipeline.h \
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
# No zstd, defined, referenced or loaded; nm must work on the binary for the check to mean anything.
no_symbols() { # BINARY REGEX WHAT: fails when nm fails, shows no xpack code, or shows a symbol matching REGEX
  local syms bad
  syms=$(nm "$1") || fail "nm $1"
  grep -q ' T xpack_' <<< "$syms" || fail "nm shows no xpack code in $1"
  bad=$(grep -E "$2" <<< "$syms" || true)
  [ -z "$bad" ] || fail "$1 holds $3: $(head -3 <<< "$bad")"
}
loader_only() { # BINARY: the loader-only app
  if ldd "$1" | grep zstd; then fail "the loader-only app $1 needs zstd"; fi
  no_symbols "$1" ' (ZSTD_|xpack_writer_|xpack_inflate_)' "zstd or more than the loader"
}
loader_only "$XP_TMP/model_app_pc"
# The same with CMake: find_package(xpack COMPONENTS loader), xpack::loader alone.
build_project "$XP_SOURCE/tests/install/consumer_part" "$XP_TMP/loader_part" -DXPACK_PART=loader \
  -DXPACK_PART_SOURCE="$XP_SOURCE/docs/examples/cmake_pipeline/model_app.c"
if grep -E 'zstd|xpack_(writer|inflate|et)' "$XP_TMP/loader_part/build.ninja"; then
  fail "xpack::loader's link line drags in zstd or more than the loader (above)"
fi
loader_only "$XP_TMP/loader_part/part_app"
"$XP_TMP/loader_part/part_app" "$XP_TMP/model.pte" "$XP_TMP/model.xpc" || fail "the CMake loader-only app refused the cache"

# The adapter for stock ExecuTorch, found as the component et_adapter: it links without zstd and attaches the
# installed tool's cache to the program it was packed from (no ExecuTorch here: what attach does alone).
cat > "$XP_TMP/adapter_app.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "xpack_et_adapter.h"
int main(int argc, char** argv) {
  FILE* f = argc == 3 ? fopen(argv[1], "rb") : NULL;
  if (f == NULL) return 2;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  rewind(f);
  char* pte = malloc((size_t)size);
  if (pte == NULL || fread(pte, 1, (size_t)size, f) != (size_t)size) return 2;
  fclose(f);
  xpack_error err;
  if (xpack_et_adapter_attach(argv[2], XPACK_OPEN_PROBE_EARLY, pte, (size_t)size, NULL, NULL, 0, &err) != XPACK_OK) {
    fprintf(stderr, "attach: %s\n", err.message);
    return 1;
  }
  xpack_cache* cache = xpack_et_adapter_cache();
  const unsigned long long served = xpack_cache_entries_served(cache), entries = xpack_cache_entry_count(cache);
  printf("adapter: %llu of %llu entries served here\n", served, entries);
  const int whole = xpack_et_adapter_provider() != NULL && entries > 0 && served == entries;
  xpack_et_adapter_detach();
  free(pte);
  return whole ? 0 : 1;
}
C
build_project "$XP_SOURCE/tests/install/consumer_part" "$XP_TMP/adapter_part" -DXPACK_PART=et_adapter \
  -DXPACK_PART_SOURCE="$XP_TMP/adapter_app.c"
if grep -E 'zstd|xpack_(writer|inflate)' "$XP_TMP/adapter_part/build.ninja"; then
  fail "xpack::et_adapter's link line drags in zstd or the writer (above)"
fi
"$XP_TMP/adapter_part/part_app" "$XP_TMP/model.pte" "$XP_TMP/model.xpc" || fail "the CMake adapter app did not serve the cache whole"
# The same from `pkg-config xpack-et-adapter`, a plain cc command line: its Libs carry the --wrap.
adapter_flags=$(pkg-config --static --cflags --libs xpack-et-adapter) || fail "pkg-config xpack-et-adapter"
echo "--- pkg-config --static --cflags --libs xpack-et-adapter: $adapter_flags"
case " $adapter_flags " in
  *zstd* | *xpack_writer* | *xpack_inflate* | *xpack_pipeline*) fail "the adapter's link line drags in zstd or the writer" ;;
  *--wrap=xnn_create_runtime_v4*--wrap=xnn_delete_runtime*) ;;
  *) fail "the adapter's link line lacks --wrap=xnn_create_runtime_v4 or --wrap=xnn_delete_runtime" ;;
esac
# shellcheck disable=SC2086
"$XP_CC" -std=c11 -o "$XP_TMP/adapter_app_pc" "$XP_TMP/adapter_app.c" $adapter_flags \
  || fail "linking the adapter app with pkg-config xpack-et-adapter"
"$XP_TMP/adapter_app_pc" "$XP_TMP/model.pte" "$XP_TMP/model.xpc" || fail "the pkg-config adapter app did not serve the cache whole"

# The transport form: packed with --zstd by the installed tool, refused by the loader, inflated by a program
# linked from `pkg-config xpack-inflate` (no writer), then served.
"$xpack" -q pack "$XP_TMP/model.pte" --zstd -o "$XP_TMP/transport.xpc"
if "$XP_TMP/model_app_pc" "$XP_TMP/model.pte" "$XP_TMP/transport.xpc" 2> "$XP_TMP/refused.txt"; then
  fail "the loader accepted a transport-form cache"
fi
grep -q "inflate" "$XP_TMP/refused.txt" || { cat "$XP_TMP/refused.txt"; fail "the refusal does not name xpack inflate"; }
inflate_flags=$(pkg-config --cflags --libs xpack-inflate) || fail "pkg-config xpack-inflate"
echo "--- pkg-config --cflags --libs xpack-inflate: $inflate_flags"
case " $inflate_flags " in
  *xpack_pack* | *xpack_et* | *xpack_writer* | *xpack_loader* | *XNNPACK* | *xnnpack*)
    fail "the inflater's link line drags in the writer, the loader or XNNPACK" ;;
esac
[ -z "$(pkg-config --print-requires xpack-inflate)" ] || fail "xpack-inflate.pc requires $(pkg-config --print-requires xpack-inflate)"
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
no_symbols "$XP_TMP/inflate_pc" ' (xnn_|xpack_cache_|xpack_writer_)' "the loader or XNNPACK"
"$XP_TMP/inflate_pc" "$XP_TMP/transport.xpc" "$XP_TMP/inflated.xpc" || fail "inflating the transport form"
cmp "$XP_TMP/inflated.xpc" "$XP_TMP/model.xpc" || fail "the inflated cache differs from the one packed without --zstd"
"$XP_TMP/model_app_pc" "$XP_TMP/model.pte" "$XP_TMP/inflated.xpc" || fail "the loader refused the inflated cache"
# The same with CMake, where no XNNPACK can be found: find_package(xpack COMPONENTS inflate) must neither look for
# it nor link it.
build_project "$XP_SOURCE/tests/install/consumer_part" "$XP_TMP/inflate_part" -DXPACK_PART=inflate \
  -DXPACK_PART_SOURCE="$XP_TMP/inflate.c" -DXPACK_XNNPACK_PREFIX="$XP_TMP/no-xnnpack-here"
if grep -iE 'xnnpack|xpack_loader' "$XP_TMP/inflate_part/build.ninja"; then
  fail "xpack::inflate's link line drags in the loader or XNNPACK (above)"
fi
no_symbols "$XP_TMP/inflate_part/part_app" ' (xnn_|xpack_cache_|xpack_writer_)' "the loader or XNNPACK"
rm "$XP_TMP/inflated.xpc"
"$XP_TMP/inflate_part/part_app" "$XP_TMP/transport.xpc" "$XP_TMP/inflated.xpc" || fail "the CMake inflater failed"
cmp "$XP_TMP/inflated.xpc" "$XP_TMP/model.xpc" || fail "the CMake inflater's cache differs from the one packed without --zstd"
echo "install consumers: ok"
