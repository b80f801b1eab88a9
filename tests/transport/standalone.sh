#!/usr/bin/env bash
# A program that links xpack_inflate alone (inflate_flip) holds none of the packer, the loader, XNNPACK or
# the zstd compressor, defined or referenced: an app can link it for install-time use (xpack_transport.h).
# nm must succeed and show the inflater itself, so a missing, unreadable or stripped file fails the test.
set -euo pipefail
BIN=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -f "$BIN" ] || fail "$BIN does not exist"
syms=$(nm "$BIN") || fail "nm $BIN failed"
grep -qE ' T xpack_inflate_file$' <<< "$syms" || fail "$BIN does not define xpack_inflate_file (nm shows no inflater)"
bad=$(grep -E ' (xnn_|ZSTD_compress|ZSTD_createCCtx|xpack_writer|xpack_cache_|xpack_compress)' <<< "$syms" || true)
[ -z "$bad" ] || fail "$BIN pulls in code that xpack_inflate must not need:
$bad"
echo "ok: $BIN links the inflater without XNNPACK, the loader, the writer or the zstd compressor"
