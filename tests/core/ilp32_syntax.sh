#!/usr/bin/env bash
# libpack compiled for a 32-bit target (clang -m32 -fsyntax-only, every warning an error): apps on 32-bit phones
# (armeabi-v7a) link the loader, where size_t and off_t have 32 bits. This machine has no 32-bit libraries, so
# nothing is linked or run: the check is the compiler's, over the sources with the build's flags, definitions
# and XNNPACK headers. What it catches: a constant shifted past 32 bits (the loader's heap offsets were
# `(size_t)1 << 62`, 0 on 32-bit targets: every miss answered with the file's first bytes), pointers to 32-bit
# off_t handed where 64-bit offsets are written (copy_file_range), and other conversions the warnings name.
# usage: ilp32_syntax.sh ROOT XNNPACK_INCLUDE_DIR XNNPACK_VERSION [BUILD_FLAG...]
# BUILD_FLAGs are the build's warnings and definitions (CMakeLists.txt's XPACK_C_WARNINGS, XPACK_C_DEFINITIONS).
# Exit: 0 clean, 1 a warning or error, 77 skipped (no clang, or no 32-bit-capable C headers here).
set -u
root=$1 xnn_include=$2 xnn_version=$3
shift 3
cc=${CC_ILP32:-clang}
command -v "$cc" >/dev/null 2>&1 || { echo "skipped: $cc not found"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Debian's amd64 headers serve i386 too (bi-arch), but for gnu/stubs-32.h, which only lists functions glibc's
# 32-bit build lacks: an empty one is enough for a syntax check. The multiarch folder is named explicitly,
# because -m32 looks for i386-linux-gnu's.
mkdir -p "$work/stub/gnu" && : >"$work/stub/gnu/stubs-32.h"
multiarch=$("$cc" -print-multiarch 2>/dev/null)
flags=(-m32 -std=c11 -fsyntax-only "$@" -Werror -Wno-deprecated-declarations
       -DXPACK_VERSION_STRING=\"ilp32\" "-DXPACK_XNNPACK_VERSION=\"$xnn_version\""
       -isystem "$work/stub")
[ -n "$multiarch" ] && [ -d "/usr/include/$multiarch" ] && flags+=(-isystem "/usr/include/$multiarch")
flags+=(-I"$root/libpack/include" -I"$root/libpack" -I"$root/format" -isystem "$xnn_include")
printf '#include <pthread.h>\n#include <stdint.h>\n#include <sys/types.h>\n_Static_assert(sizeof(size_t) == 4, "ilp32");\n' \
  >"$work/probe.c"
if ! "$cc" "${flags[@]}" "$work/probe.c" >"$work/probe.log" 2>&1; then
  echo "skipped: $cc -m32 cannot compile against this machine's C headers:"
  head -5 "$work/probe.log"
  exit 77
fi
status=0 count=0
while IFS= read -r f; do
  count=$((count + 1))
  if ! "$cc" "${flags[@]}" "$f" >"$work/out.log" 2>&1; then
    echo "FAIL: ${f#"$root"/} on a 32-bit target:"
    head -20 "$work/out.log"
    status=1
  fi
done < <(find "$root/libpack" -name '*.c' | sort)
[ $status -eq 0 ] && echo "ok: $count sources of libpack compile for a 32-bit target without a warning"
exit $status
