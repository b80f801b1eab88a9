#!/usr/bin/env bash
# Builds the real ExecuTorch runtime (core, data loaders, threadpool, XNNPACK backend; static libraries
# and headers) from the vendored sources in ../shared/vendor, against a given XNNPACK install, into a
# cache outside the checkout. A second run with the same inputs costs seconds.
#
#   tools/setup-executorch.sh [XNNPACK_PREFIX]
#
# Environment:
#   XNNPACK_PREFIX     the XNNPACK install to build against (argument wins); default: what
#                      tools/setup-deps.sh prints (Debian's 4ea82e5 built into the deps cache)
#   XPACK_ET_VERSION   v1.4.0 (default) or main-cff6f4dd
#   XPACK_VENDOR_DIR   the vendored archives (default: <repo>/../shared/vendor)
#   XPACK_DEPS_CACHE   where to build and keep things (default: ~/.cache/xpack-deps)
#   XPACK_TARGET_TOOLCHAIN  a CMake toolchain file (cmake/toolchains/): the runtime is cross-built with it over
#                      an XNNPACK prefix built the same way (setup-deps.sh --arch); flatc stays this machine's
#
# Last line of stdout: EXECUTORCH_PREFIX=<prefix>. The prefix holds lib/libet_*.a, include/ (executorch/,
# flatbuffers/), bin/flatc and et.env (the inputs it was built from).
# Exit codes: 0 ready; 77 the vendored sources are absent (callers turn this into a test skip);
# 1 anything else failed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "setup-executorch: $*" >&2; }

ET_VERSION=${XPACK_ET_VERSION:-v1.4.0}
case "$ET_VERSION" in
  v1.4.0|main-cff6f4dd) ;;
  *) say "unknown ExecuTorch version '$ET_VERSION' (known: v1.4.0, main-cff6f4dd)"; exit 1 ;;
esac
FLATBUFFERS_VERSION=v24.3.25
VENDOR=${XPACK_VENDOR_DIR:-$here/../shared/vendor}
CACHE_ROOT="${XPACK_DEPS_CACHE:-${HOME:-/root}/.cache/xpack-deps}"

if [ ! -f "$VENDOR/SHA256SUMS" ]; then
  say "the vendored ExecuTorch sources are absent: no $VENDOR/SHA256SUMS (set XPACK_VENDOR_DIR to the folder"
  say "holding executorch-*-runtime.tar.xz, flatbuffers-$FLATBUFFERS_VERSION.tar.xz and SHA256SUMS)"
  exit 77
fi
VENDOR=$(cd "$VENDOR" && pwd)
et_tar="executorch-$ET_VERSION-runtime.tar.xz"
fb_tar="flatbuffers-$FLATBUFFERS_VERSION.tar.xz"
for f in "$et_tar" "$fb_tar"; do
  [ -f "$VENDOR/$f" ] || { say "$VENDOR has no $f"; exit 77; }
  want=$(awk -v f="$f" '$2 == f { print $1 }' "$VENDOR/SHA256SUMS")
  [ -n "$want" ] || { say "$f is not listed in $VENDOR/SHA256SUMS"; exit 1; }
  got=$(sha256sum "$VENDOR/$f" | cut -d' ' -f1)
  [ "$got" = "$want" ] || { say "SHA-256 mismatch for $f: expected $want, got $got"; exit 1; }
done
say "SHA-256 ok: $et_tar, $fb_tar"

if [ $# -ge 1 ]; then XNNPACK_PREFIX=$1; fi
if [ -z "${XNNPACK_PREFIX:-}" ]; then
  line=$("$here/tools/setup-deps.sh" | tail -n 1)
  XNNPACK_PREFIX=${line#XNNPACK_PREFIX=}
fi
[ -f "$XNNPACK_PREFIX/include/xnnpack.h" ] || { say "XNNPACK_PREFIX=$XNNPACK_PREFIX has no include/xnnpack.h"; exit 1; }
XNNPACK_PREFIX=$(cd "$XNNPACK_PREFIX" && pwd)

mkdir -p "$CACHE_ROOT"
# One setup at a time per cache (ctest runs tests in parallel; each may call this script).
exec 9>"$CACHE_ROOT/.setup-executorch.lock"
flock 9

# --- flatc 24.3.25, built once ----------------------------------------------------------------------
fb_tag=$(printf '%s\n' "flatc $FLATBUFFERS_VERSION release v1" "$(sha256sum "$VENDOR/$fb_tar" | cut -c1-64)" \
         | sha256sum | cut -c1-12)
FB_PREFIX="$CACHE_ROOT/flatbuffers-$FLATBUFFERS_VERSION-$fb_tag"
if [ ! -f "$FB_PREFIX/.complete" ]; then
  work="$CACHE_ROOT/work-flatbuffers-$fb_tag"
  rm -rf "$work" "$FB_PREFIX"; mkdir -p "$work/src"
  tar -xJf "$VENDOR/$fb_tar" -C "$work/src"
  src="$work/src/flatbuffers"; [ -f "$src/CMakeLists.txt" ] || src="$work/src"
  say "building flatc $FLATBUFFERS_VERSION (once; about 4 minutes on 2 cores)"
  t0=$SECONDS
  cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DFLATBUFFERS_BUILD_TESTS=OFF -DFLATBUFFERS_BUILD_FLATLIB=OFF -DFLATBUFFERS_BUILD_FLATHASH=OFF \
    -DFLATBUFFERS_BUILD_GRPCTEST=OFF -DFLATBUFFERS_INSTALL=OFF > "$work/configure.log" 2>&1 \
    || { say "flatbuffers configure failed; see $work/configure.log"; tail -20 "$work/configure.log" >&2; exit 1; }
  nice -n 10 ninja -C "$work/build" flatc > "$work/build.log" 2>&1 \
    || { say "flatc build failed; see $work/build.log"; tail -30 "$work/build.log" >&2; exit 1; }
  mkdir -p "$FB_PREFIX.tmp/bin"
  cp "$work/build/flatc" "$FB_PREFIX.tmp/bin/flatc"
  cp -r "$src/include" "$FB_PREFIX.tmp/include"
  "$FB_PREFIX.tmp/bin/flatc" --version | grep -q "24.3.25" || { say "built flatc is not 24.3.25"; exit 1; }
  touch "$FB_PREFIX.tmp/.complete"
  mv "$FB_PREFIX.tmp" "$FB_PREFIX"
  rm -rf "$work"
  say "flatc built in $((SECONDS - t0)) s"
fi
FLATC="$FB_PREFIX/bin/flatc"

# --- the ExecuTorch runtime over this XNNPACK --------------------------------------------------------
# The XNNPACK identity is its content (headers and libraries), so a rebuilt XNNPACK at the same path gets
# a new runtime; the recipe is this script plus the CMake file that builds the runtime.
xnn_identity=$( (cd "$XNNPACK_PREFIX" && find include lib -type f \( -name '*.h' -o -name '*.a' -o -name '*.so*' \) \
                 | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -c1-64)
recipe=$(cat "$here/tools/setup-executorch.sh" "$here/tests/executorch/runtime/CMakeLists.txt" | sha256sum | cut -c1-64)
cxx_version=$(c++ --version | head -n1)
target_args=()
if [ -n "${XPACK_TARGET_TOOLCHAIN:-}" ]; then
  # Cross: the toolchain's compiler and files; the XNNPACK prefix is a root of the target's files.
  target_args=(-DCMAKE_TOOLCHAIN_FILE="$XPACK_TARGET_TOOLCHAIN" -DCMAKE_FIND_ROOT_PATH="$XNNPACK_PREFIX")
  cxx_version="toolchain $(sha256sum "$XPACK_TARGET_TOOLCHAIN" | cut -c1-64) ${XPACK_CROSS_CLANG:-clang-19}: $("${XPACK_CROSS_CLANG:-clang-19}" --version | head -n1)"
fi
tag=$(printf '%s\n' "$ET_VERSION" "$(sha256sum "$VENDOR/$et_tar" | cut -c1-64)" "$xnn_identity" "$recipe" \
      "$cxx_version" "$fb_tag" | sha256sum | cut -c1-12)
PREFIX="$CACHE_ROOT/executorch-$ET_VERSION-$tag"
if [ -f "$PREFIX/.complete" ]; then
  say "ExecuTorch $ET_VERSION over $XNNPACK_PREFIX: cached in $PREFIX"
else
  work="$CACHE_ROOT/work-executorch-$tag"
  rm -rf "$work" "$PREFIX" "$PREFIX.tmp"; mkdir -p "$work/src"
  tar -xJf "$VENDOR/$et_tar" -C "$work/src"
  [ -d "$work/src/executorch/runtime" ] || { say "$et_tar has no executorch/runtime"; exit 1; }
  # Debian's cpuinfo (used by the default 4ea82e5 prefix) predates the RISC-V "sawtooth" uarch names
  # that extension/threadpool/cpuinfo_utils.cpp lists; such a cpuinfo never reports them, so their
  # case labels are dropped from the work copy (never from the vendored archive).
  cpuinfo_h="$XNNPACK_PREFIX/include/cpuinfo.h"; [ -f "$cpuinfo_h" ] || cpuinfo_h=/usr/include/cpuinfo.h
  if ! grep -q cpuinfo_uarch_sawtooth "$cpuinfo_h"; then
    say "$cpuinfo_h has no cpuinfo_uarch_sawtooth: dropping those case labels from cpuinfo_utils.cpp"
    sed -i -E '/case cpuinfo_uarch_[a-z_]*sawtooth:/d' "$work/src/executorch/extension/threadpool/cpuinfo_utils.cpp"
  fi
  say "building ExecuTorch $ET_VERSION runtime over $XNNPACK_PREFIX (about 1 minute on 2 cores)"
  t0=$SECONDS
  cmake -S "$here/tests/executorch/runtime" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DET_SRC="$work/src/executorch" -DXNNPACK_PREFIX="$XNNPACK_PREFIX" -DFLATC="$FLATC" \
    -DFLATBUFFERS_INCLUDE="$FB_PREFIX/include" -DCMAKE_INSTALL_PREFIX="$PREFIX.tmp" "${target_args[@]}" \
    > "$work/configure.log" 2>&1 \
    || { say "configure failed; see $work/configure.log"; tail -20 "$work/configure.log" >&2; exit 1; }
  nice -n 10 ninja -C "$work/build" > "$work/build.log" 2>&1 \
    || { say "build failed; see $work/build.log"; tail -40 "$work/build.log" >&2; exit 1; }
  ninja -C "$work/build" install > "$work/install.log" 2>&1 \
    || { say "install failed; see $work/install.log"; tail -20 "$work/install.log" >&2; exit 1; }
  mkdir -p "$PREFIX.tmp/bin"; cp "$FLATC" "$PREFIX.tmp/bin/flatc"
  cat > "$PREFIX.tmp/et.env" <<ENV
EXECUTORCH_VERSION=$ET_VERSION
EXECUTORCH_ARCHIVE_SHA256=$(sha256sum "$VENDOR/$et_tar" | cut -c1-64)
XNNPACK_PREFIX=$XNNPACK_PREFIX
XNNPACK_IDENTITY=$xnn_identity
TARGET_TOOLCHAIN=${XPACK_TARGET_TOOLCHAIN:-}
RECIPE=$recipe
ENV
  touch "$PREFIX.tmp/.complete"
  mv "$PREFIX.tmp" "$PREFIX"
  rm -rf "$work"
  say "ExecuTorch $ET_VERSION runtime built in $((SECONDS - t0)) s"
fi
echo "EXECUTORCH_PREFIX=$PREFIX"
