#!/usr/bin/env bash
# Makes xpack's build dependencies available, idempotently:
#  - Debian bookworm packages: cmake, ninja, libzstd-dev, libxxhash-dev, flatbuffers-compiler, clang, ...
#  - cpuinfo and pthreadpool from Debian trixie (binary packages that run on bookworm's glibc);
#  - XNNPACK 0.0~git20241108.4ea82e5 built from Debian trixie's source tarball (SHA-256 checked) into a
#    cache prefix outside the checkout, so a second run costs seconds.
# The trixie apt entry is derived from this machine's own apt configuration (the URI it already uses for
# bookworm), pinned at priority 1 so that nothing is ever upgraded from it implicitly (glibc stays).
#
# Or, with a pin selected, the XNNPACK that an ExecuTorch release pins (cmake/xnnpack_pins.txt), built with
# ExecuTorch's own XNNPACK options from the vendored archives ($repo/../shared/vendor), together with its own
# cpuinfo and pthreadpool in the same prefix; or an XNNPACK source folder the user names (the one their
# ExecuTorch checkout pins). Every prefix records what it is in $prefix/.complete (line 1: the XNNPACK
# version xpack reports; line 2: the source digest; line 3: the recipe).
#
# Or, with --arch aarch64 on an x86-64 machine, a pin cross-built for 64-bit Arm Linux (phones' CPUs) with
# cmake/toolchains/aarch64-linux-gnu.cmake, together with the zstd and xxHash xpack links (Debian trixie's
# source tarballs, SHA-256 checked), all in one prefix; programs built over it run here under qemu-aarch64.
#
# Usage: tools/setup-deps.sh [--pin NAME | --xnnpack-source DIR] [--arch aarch64] [--list-pins]
# Prints the XNNPACK prefix on the last line of stdout as XNNPACK_PREFIX=...
# Environment:
#   XNNPACK_PREFIX        use an existing XNNPACK install of this API level instead of building one
#   XPACK_XNNPACK_PIN     a pin of cmake/xnnpack_pins.txt (same as --pin); unset = the default, Debian's
#   XPACK_XNNPACK_SOURCE  an XNNPACK source folder (same as --xnnpack-source); cpuinfo, pthreadpool and FXdiv
#                         come from CPUINFO_SOURCE_DIR, PTHREADPOOL_SOURCE_DIR, FXDIV_SOURCE_DIR, else from
#                         folders of those names beside it (ExecuTorch's backends/xnnpack/third-party layout)
#   XPACK_TARGET_ARCH     the CPU architecture to build for (same as --arch; default: this machine's)
#   XPACK_CROSS_CLANG     the clang of cross builds (default clang-19)
#   XPACK_XNNPACK_KLEIDIAI  ON (default, as ExecuTorch's default preset) or OFF: KleidiAI where XNNPACK uses it
#   XPACK_VENDOR_DIR      where the vendored archives and their SHA256SUMS are (default: $repo/../shared/vendor)
#   XPACK_DEPS_CACHE      where to build and keep XNNPACK (default: ~/.cache/xpack-deps); one run at a time
#                         uses it (a second waits for the first: .setup-deps.lock there)
#   XPACK_SKIP_APT=1      do not touch apt (everything is already installed)
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "$0")/.." && pwd)
PINS_TABLE="$REPO_ROOT/cmake/xnnpack_pins.txt"
PIN="${XPACK_XNNPACK_PIN:-}"
XNNPACK_SOURCE="${XPACK_XNNPACK_SOURCE:-}"
TARGET_ARCH="${XPACK_TARGET_ARCH:-$(uname -m)}"
while [ $# -gt 0 ]; do
  case "$1" in
    --pin) PIN="${2:?--pin needs a name}"; shift 2 ;;
    --pin=*) PIN="${1#--pin=}"; shift ;;
    --xnnpack-source) XNNPACK_SOURCE="${2:?--xnnpack-source needs a folder}"; shift 2 ;;
    --xnnpack-source=*) XNNPACK_SOURCE="${1#--xnnpack-source=}"; shift ;;
    --arch) TARGET_ARCH="${2:?--arch needs a name}"; shift 2 ;;
    --arch=*) TARGET_ARCH="${1#--arch=}"; shift ;;
    --list-pins) grep -v '^#' "$PINS_TABLE" | awk 'NF { print $1 "\t" $NF }'; exit 0 ;;
    *) echo "setup-deps: unknown argument $1 (usage: setup-deps.sh [--pin NAME | --xnnpack-source DIR] [--arch aarch64] [--list-pins])" >&2; exit 2 ;;
  esac
done

say() { echo "setup-deps: $*" >&2; }

# pin_row NAME: prints NAME's row of the pins table (the first row when NAME is empty: the default).
pin_row() {
  grep -v -E '^[[:space:]]*(#|$)' "$PINS_TABLE" | awk -v pin="$1" 'pin == "" || $1 == pin { print; exit }'
}
read -r DEFAULT_PIN default_archive XNNPACK_SHA256 _ <<<"$(pin_row "")"
XNNPACK_TARBALL="${default_archive#debian:}"
XNNPACK_VERSION="${XNNPACK_TARBALL#xnnpack_}"; XNNPACK_VERSION="${XNNPACK_VERSION%.orig.tar.xz}"
CACHE_ROOT="${XPACK_DEPS_CACHE:-${HOME:-/root}/.cache/xpack-deps}"
# Changing any build option must change the prefix, so an old build is never reused for a new recipe.
BUILD_RECIPE="v1 static release prod-microkernels no-tests no-benchmarks kleidiai-off pic system-deps"
RECIPE_TAG=$(printf '%s' "$BUILD_RECIPE" | sha256sum | cut -c1-12)
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"

bookworm_packages=(cmake ninja-build pkg-config gcc g++ python3 xz-utils ca-certificates
  libzstd-dev libxxhash-dev flatbuffers-compiler libfp16-dev libfxdiv-dev libpsimd-dev
  clang libclang-rt-14-dev qemu-user zstd)
trixie_packages=(libcpuinfo-dev libpthreadpool-dev)
CROSS=0
if [ "$TARGET_ARCH" != "$(uname -m)" ]; then
  case "$(uname -m)/$TARGET_ARCH" in
    x86_64/aarch64) CROSS=1 ;;
    *) say "XPACK_TARGET_ARCH=$TARGET_ARCH: cross builds go from x86_64 to aarch64 only (this machine is $(uname -m))"; exit 2 ;;
  esac
  CROSS_CLANG="${XPACK_CROSS_CLANG:-clang-19}"
  # The compiler and the target's C library and runtime (sysroot /usr/aarch64-linux-gnu), and qemu to run.
  bookworm_packages+=("$CROSS_CLANG" gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross)
fi

have_all_packages() {
  local p
  for p in "${bookworm_packages[@]}" "${trixie_packages[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || return 1
  done
  # cpuinfo and pthreadpool must be the trixie versions (bookworm's are too old for this XNNPACK).
  dpkg-query -W -f='${Version}\n' libpthreadpool-dev | grep -q '^0.0~git2024' || return 1
}

# Writes a deb822 source for trixie next to the machine's existing Debian source, reusing its URI.
ensure_trixie_source() {
  local list=/etc/apt/sources.list.d/xpack-trixie.sources
  [ -f "$list" ] && return 0
  local uri=""
  uri=$(apt-get indextargets --format '$(SITE)' 'Identifier: Packages' 2>/dev/null \
        | grep -v -i security | grep -i debian | head -n1 || true)
  if [ -z "$uri" ]; then
    uri=$(grep -h -E '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null \
          | grep -v -i security | grep -i debian | head -n1 | sed -E 's/^URIs:[[:space:]]*//; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?//; s/[[:space:]].*$//')
  fi
  [ -n "$uri" ] || { say "cannot find a Debian archive URI in this machine's apt configuration"; exit 1; }
  say "adding Debian trixie (deb + deb-src) from $uri, pinned at priority 1"
  $SUDO tee "$list" >/dev/null <<SRC
Types: deb deb-src
URIs: ${uri%/}
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  $SUDO tee /etc/apt/preferences.d/xpack-trixie >/dev/null <<PIN
Package: *
Pin: release n=trixie
Pin-Priority: 1
PIN
  APT_UPDATED=0
}

APT_UPDATED=0
apt_update_once() {
  if [ "$APT_UPDATED" -eq 0 ]; then
    say "apt-get update"
    $SUDO apt-get update -qq >&2
    APT_UPDATED=1
  fi
}

install_packages() {
  if [ "${XPACK_SKIP_APT:-0}" = 1 ]; then say "XPACK_SKIP_APT=1: not touching apt"; return; fi
  ensure_trixie_source
  if have_all_packages; then say "Debian packages: already installed"; return; fi
  apt_update_once
  local t=() p
  for p in "${trixie_packages[@]}"; do t+=("$p/trixie"); done
  say "installing ${bookworm_packages[*]} ${t[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${bookworm_packages[@]}" "${t[@]}" >&2
}

# Builds the XNNPACK configured in $1/build and installs it into $PREFIX.tmp (renamed into place by the caller
# once complete, so an interrupted build never looks finished).
build_and_install() {
  local work=$1
  ninja -C "$work/build" -j"$(nproc)" > "$work/build.log" 2>&1 \
    || { say "XNNPACK build failed; see $work/build.log"; tail -20 "$work/build.log" >&2; exit 1; }
  rm -rf "$PREFIX.tmp"
  ninja -C "$work/build" install > "$work/install.log" 2>&1
}

build_xnnpack() {
  if [ -n "${XNNPACK_PREFIX:-}" ]; then
    [ -f "$XNNPACK_PREFIX/include/xnnpack.h" ] || { say "XNNPACK_PREFIX=$XNNPACK_PREFIX has no include/xnnpack.h"; exit 1; }
    say "using XNNPACK from XNNPACK_PREFIX=$XNNPACK_PREFIX"
    PREFIX="$XNNPACK_PREFIX"; return
  fi
  if [ "$CROSS" = 1 ]; then
    say "the default XNNPACK (Debian's $XNNPACK_VERSION) is built for this machine only: cross builds take a pin (--pin)"; exit 2
  fi
  PREFIX="$CACHE_ROOT/xnnpack-${XNNPACK_VERSION}-${RECIPE_TAG}"
  if [ -f "$PREFIX/.complete" ]; then say "XNNPACK ${XNNPACK_VERSION}: cached in $PREFIX"; return; fi
  local work="$CACHE_ROOT/work-${RECIPE_TAG}"
  rm -rf "$work"; mkdir -p "$work/src"
  say "fetching the XNNPACK ${XNNPACK_VERSION} source tarball (Debian trixie, source package xnnpack)"
  if [ "${XPACK_SKIP_APT:-0}" != 1 ]; then apt_update_once; fi
  # Only the upstream tarball is served (the .dsc and Debian diff are not), hence --tar-only.
  (cd "$work" && apt-get source --download-only --tar-only "xnnpack=${XNNPACK_VERSION}-2" >&2 2>/dev/null \
     || apt-get source --download-only --tar-only "xnnpack/trixie" >&2)
  local got; got=$(sha256sum "$work/$XNNPACK_TARBALL" | cut -d' ' -f1)
  if [ "$got" != "$XNNPACK_SHA256" ]; then
    say "SHA-256 mismatch for $XNNPACK_TARBALL: expected $XNNPACK_SHA256, got $got"; exit 1
  fi
  say "SHA-256 ok ($XNNPACK_SHA256)"
  tar -xJf "$work/$XNNPACK_TARBALL" -C "$work/src"
  local src="$work/src"; [ -f "$src/CMakeLists.txt" ] || src=$(dirname "$(find "$work/src" -maxdepth 2 -name CMakeLists.txt | head -n1)")
  say "building XNNPACK (static, production microkernels, KleidiAI off); about 2-3 minutes on 2 cores"
  local t0=$SECONDS
  cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DXNNPACK_USE_SYSTEM_LIBS=ON -DCPUINFO_SOURCE_DIR=/usr -DPTHREADPOOL_SOURCE_DIR=/usr -DFXDIV_SOURCE_DIR=/usr \
    -DXNNPACK_BUILD_TESTS=OFF -DXNNPACK_BUILD_BENCHMARKS=OFF -DXNNPACK_BUILD_ALL_MICROKERNELS=OFF \
    -DXNNPACK_ENABLE_KLEIDIAI=OFF -DXNNPACK_LIBRARY_TYPE=static -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DCMAKE_INSTALL_PREFIX="$PREFIX.tmp" > "$work/configure.log" 2>&1 \
    || { say "XNNPACK configure failed; see $work/configure.log"; tail -20 "$work/configure.log" >&2; exit 1; }
  build_and_install "$work"
  printf '%s\n%s\n%s\n' "$XNNPACK_VERSION" "$XNNPACK_SHA256" "$BUILD_RECIPE" > "$PREFIX.tmp/.complete"
  rm -rf "$PREFIX"; mv "$PREFIX.tmp" "$PREFIX"
  rm -rf "$work"
  say "XNNPACK built in $((SECONDS - t0)) s into $PREFIX"
}

# ---- pins and source folders: ExecuTorch's XNNPACK, with its own cpuinfo and pthreadpool ----

VENDOR_DIR="${XPACK_VENDOR_DIR:-$REPO_ROOT/../shared/vendor}"
KLEIDIAI="${XPACK_XNNPACK_KLEIDIAI:-ON}"

# ExecuTorch's XNNPACK options (backends/xnnpack/cmake/Dependencies.cmake of v1.4.0 and of main cff6f4dd).
# XNNPACK's build identifier hashes the production microkernel sources these options select, so an xpack
# built with other options packs caches that ExecuTorch's XNNPACK refuses.
executorch_xnnpack_options() {
  echo "-DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DXNNPACK_LIBRARY_TYPE=static" \
       "-DXNNPACK_BUILD_TESTS=OFF -DXNNPACK_BUILD_BENCHMARKS=OFF -DXNNPACK_BUILD_ALL_MICROKERNELS=OFF" \
       "-DXNNPACK_ENABLE_AVXVNNI=OFF -DXNNPACK_ENABLE_AVX512VNNIGFNI=OFF -DXNNPACK_ENABLE_ARM_SME2=ON" \
       "-DXNNPACK_ENABLE_KLEIDIAI=$KLEIDIAI" \
       "-DCPUINFO_LIBRARY_TYPE=static -DPTHREADPOOL_LIBRARY_TYPE=static -DCPUINFO_BUILD_PKG_CONFIG=OFF"
}

# Which XNNPACK microkernels get built also depends on the compiler (XNNPACK turns some ISAs off for old ones).
compiler_identity() {
  if [ "$CROSS" = 1 ]; then "$CROSS_CLANG" --version 2>/dev/null | head -n1; else "${CC:-cc}" --version 2>/dev/null | head -n1; fi
}
TOOLCHAIN_FILE="$REPO_ROOT/cmake/toolchains/$TARGET_ARCH-linux-gnu.cmake"
# The CMake arguments of a build for TARGET_ARCH (none for this machine's own).
target_cmake_args() {
  [ "$CROSS" = 1 ] && echo "-DCMAKE_TOOLCHAIN_FILE=$TOOLCHAIN_FILE -DXPACK_CROSS_CLANG=$CROSS_CLANG"
  return 0
}

# vendor_archive FILE: the archive's path, after checking its digest against the vendor folder's SHA256SUMS.
vendor_archive() {
  local file="$1" path="$VENDOR_DIR/$1" want got
  [ -f "$path" ] || { say "$file not found in $VENDOR_DIR (set XPACK_VENDOR_DIR)"; exit 1; }
  want=$(awk -v f="$file" '$2 == f || $2 == "*" f { print $1 }' "$VENDOR_DIR/SHA256SUMS" 2>/dev/null)
  [ -n "$want" ] || { say "$file is not listed in $VENDOR_DIR/SHA256SUMS"; exit 1; }
  got=$(sha256sum "$path" | cut -d' ' -f1)
  [ "$got" = "$want" ] || { say "SHA-256 mismatch for $path: SHA256SUMS says $want, got $got"; exit 1; }
  echo "$path"
}

# unpack ARCHIVE DEST: extracts ARCHIVE into DEST and prints the folder holding its top-level CMakeLists.txt.
unpack() {
  mkdir -p "$2"
  tar -xJf "$1" -C "$2"
  dirname "$(find "$2" -maxdepth 2 -name CMakeLists.txt | sort | head -n1)"
}

# tree_digest DIR: a digest of every file under DIR (names and contents), for source folders.
tree_digest() {
  (cd "$1" && find . -type f ! -path './.git/*' ! -path './build*' -print0 | LC_ALL=C sort -z \
     | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
}

# build_pinned NAME VERSION DIGEST RECIPE XNNPACK_SRC CPUINFO_SRC PTHREADPOOL_SRC FXDIV_SRC KLEIDIAI_SRC
# Builds into $CACHE_ROOT/xnnpack-NAME-<hash of RECIPE> (reused when complete) and sets PREFIX.
build_pinned() {
  local name="$1" version="$2" digest="$3" recipe="$4" xnn="$5" cpuinfo="$6" pthreadpool="$7" fxdiv="$8" kleidiai="$9"
  local tag; tag=$(printf '%s' "$recipe" | sha256sum | cut -c1-12)
  [ "$CROSS" = 1 ] && name+="-$TARGET_ARCH"
  PREFIX="$CACHE_ROOT/xnnpack-$name-$tag"
  if [ -f "$PREFIX/.complete" ]; then say "XNNPACK $name: cached in $PREFIX"; return; fi
  local work="$CACHE_ROOT/work-$name-$tag"
  rm -rf "$work"; mkdir -p "$work"
  # Archives are unpacked here; source folders are built in place (out of tree).
  [ -f "$xnn" ] && xnn=$(unpack "$xnn" "$work/xnnpack")
  [ -f "$cpuinfo" ] && cpuinfo=$(unpack "$cpuinfo" "$work/cpuinfo")
  [ -f "$pthreadpool" ] && pthreadpool=$(unpack "$pthreadpool" "$work/pthreadpool")
  [ -f "$fxdiv" ] && fxdiv=$(unpack "$fxdiv" "$work/fxdiv")
  [ -f "$kleidiai" ] && kleidiai=$(unpack "$kleidiai" "$work/kleidiai")
  local deps=(-DCPUINFO_SOURCE_DIR="$cpuinfo" -DPTHREADPOOL_SOURCE_DIR="$pthreadpool")
  [ -n "$fxdiv" ] && deps+=(-DFXDIV_SOURCE_DIR="$fxdiv")
  [ -n "$kleidiai" ] && deps+=(-DKLEIDIAI_SOURCE_DIR="$kleidiai")
  say "building XNNPACK $name with ExecuTorch's options, cpuinfo and pthreadpool into $PREFIX (about 2 minutes on 2 cores)"
  local t0=$SECONDS
  # shellcheck disable=SC2046 # the options are words without spaces
  cmake -S "$xnn" -B "$work/build" -G Ninja $(executorch_xnnpack_options) $(target_cmake_args) "${deps[@]}" \
    -DCMAKE_INSTALL_PREFIX="$PREFIX.tmp" > "$work/configure.log" 2>&1 \
    || { say "XNNPACK configure failed; see $work/configure.log"; tail -20 "$work/configure.log" >&2; exit 1; }
  build_and_install "$work"
  [ "$CROSS" = 1 ] && build_target_libs "$work"
  for lib in cpuinfo pthreadpool; do
    [ -f "$PREFIX.tmp/lib/lib$lib.a" ] || { say "the build installed no lib/lib$lib.a into $PREFIX.tmp"; exit 1; }
  done
  printf '%s\n%s\n%s\n' "$version" "$digest" "$recipe" > "$PREFIX.tmp/.complete"
  rm -rf "$PREFIX"; mv "$PREFIX.tmp" "$PREFIX"
  rm -rf "$work"
  say "XNNPACK $name built in $((SECONDS - t0)) s into $PREFIX"
}

# ---- cross builds: the libraries xpack links besides XNNPACK, for the target ----

# Debian trixie's source tarballs of zstd and xxHash (the host's come from bookworm's -dev packages; the
# target's are built like XNNPACK, from source): source package, version, tarball, SHA-256.
TARGET_ZSTD=(libzstd 1.5.7+dfsg-1 libzstd_1.5.7+dfsg.orig.tar.xz 0c092ef267edce57ba7f3f2645c861f72eaf5e76273c6c3632869423464b90a5)
TARGET_XXHASH=(xxhash 0.8.3-2 xxhash_0.8.3.orig.tar.gz aae608dfe8213dfd05d909a57718ef82f30722c392344583d3f39050c7f29a80)

# fetch_debian_source DIR PACKAGE VERSION TARBALL SHA256: the upstream tarball in DIR, digest checked.
fetch_debian_source() {
  local dir=$1 package=$2 version=$3 tarball=$4 sha=$5 got
  if [ "${XPACK_SKIP_APT:-0}" != 1 ]; then apt_update_once; fi
  (cd "$dir" && apt-get source --download-only --tar-only "$package=$version" >&2 2>/dev/null \
     || apt-get source --download-only --tar-only "$package/trixie" >&2)
  [ -f "$dir/$tarball" ] || { say "apt-get source $package did not fetch $tarball"; exit 1; }
  got=$(sha256sum "$dir/$tarball" | cut -d' ' -f1)
  [ "$got" = "$sha" ] || { say "SHA-256 mismatch for $tarball: expected $sha, got $got"; exit 1; }
}

# build_target_libs WORK: zstd (its own CMake build, static library only) and xxHash (one source file) for
# the target, installed into $PREFIX.tmp beside XNNPACK, cpuinfo and pthreadpool.
build_target_libs() {
  local work=$1 src
  mkdir -p "$work/target-libs"
  fetch_debian_source "$work/target-libs" "${TARGET_ZSTD[@]}"
  fetch_debian_source "$work/target-libs" "${TARGET_XXHASH[@]}"
  mkdir -p "$work/target-libs/zstd"
  tar -xJf "$work/target-libs/${TARGET_ZSTD[2]}" -C "$work/target-libs/zstd"
  src=$(dirname "$(dirname "$(find "$work/target-libs/zstd" -path '*/build/cmake/CMakeLists.txt' | head -n1)")")
  # shellcheck disable=SC2046
  cmake -S "$src/cmake" -B "$work/zstd-build" -G Ninja -DCMAKE_BUILD_TYPE=Release $(target_cmake_args) \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DZSTD_BUILD_PROGRAMS=OFF -DZSTD_BUILD_SHARED=OFF -DZSTD_BUILD_STATIC=ON \
    -DZSTD_BUILD_TESTS=OFF -DZSTD_MULTITHREAD_SUPPORT=ON -DCMAKE_INSTALL_PREFIX="$PREFIX.tmp" \
    -DCMAKE_INSTALL_LIBDIR=lib > "$work/zstd.log" 2>&1 \
    && ninja -C "$work/zstd-build" install >> "$work/zstd.log" 2>&1 \
    || { say "zstd for $TARGET_ARCH failed; see $work/zstd.log"; tail -20 "$work/zstd.log" >&2; exit 1; }
  mkdir -p "$work/target-libs/xxhash"  # apart: zstd's tree has an xxhash.c of its own (namespaced ZSTD_)
  tar -xzf "$work/target-libs/${TARGET_XXHASH[2]}" -C "$work/target-libs/xxhash"
  src=$(dirname "$(find "$work/target-libs/xxhash" -maxdepth 2 -name xxhash.c | head -n1)")
  "$CROSS_CLANG" --target="$TARGET_ARCH-linux-gnu" -O2 -fPIC -c "$src/xxhash.c" -o "$work/xxhash.o" \
    && "$TARGET_ARCH-linux-gnu-ar" rcs "$PREFIX.tmp/lib/libxxhash.a" "$work/xxhash.o" \
    && cp "$src/xxhash.h" "$PREFIX.tmp/include/" \
    || { say "xxHash for $TARGET_ARCH failed"; exit 1; }
}

recipe_common() {
  local r="v1 arch=$TARGET_ARCH compiler=$(compiler_identity) options=$(executorch_xnnpack_options)"
  if [ "$CROSS" = 1 ]; then
    r+=" toolchain=$(sha256sum "$TOOLCHAIN_FILE" | cut -c1-12) target-libs=v2 zstd=${TARGET_ZSTD[3]} xxhash=${TARGET_XXHASH[3]}"
  fi
  echo "$r"
}

check_target_arch() {
  if [ "$CROSS" = 1 ] && [ ! -f "$TOOLCHAIN_FILE" ]; then say "no toolchain file $TOOLCHAIN_FILE"; exit 1; fi
}

build_pin() {
  local row; row=$(pin_row "$PIN")
  [ -n "$row" ] || { say "no pin '$PIN' in $PINS_TABLE (known: $(grep -v '^#' "$PINS_TABLE" | awk 'NF { printf "%s ", $1 }'))"; exit 2; }
  local name archive sha cpuinfo pthreadpool fxdiv kleidiai releases
  read -r name archive sha cpuinfo pthreadpool fxdiv kleidiai releases <<<"$row"
  if [ "$name" = "$DEFAULT_PIN" ]; then build_xnnpack; return; fi
  check_target_arch
  [ -d "$VENDOR_DIR" ] || { say "pin $name needs the vendored sources: $VENDOR_DIR is missing (set XPACK_VENDOR_DIR)"; exit 1; }
  local xnn_path; xnn_path=$(vendor_archive "$archive")
  [ "$(sha256sum "$xnn_path" | cut -d' ' -f1)" = "$sha" ] \
    || { say "$archive does not have the SHA-256 that $PINS_TABLE names ($sha)"; exit 1; }
  local recipe="pin=$name xnnpack=$sha" paths=() dep
  for dep in "$cpuinfo" "$pthreadpool" "$fxdiv" "$kleidiai"; do
    if [ "$dep" = - ] || { [ "$dep" = "$kleidiai" ] && [ "$KLEIDIAI" != ON ]; }; then paths+=(""); continue; fi
    paths+=("$(vendor_archive "$dep")")
    recipe+=" ${dep}"
  done
  recipe+=" $(recipe_common)"
  local version="${archive#xnnpack-}"; version="${version%.tar.xz}"
  say "pin $name: XNNPACK $version (ExecuTorch $releases)"
  build_pinned "$name" "$version" "$sha" "$recipe" "$xnn_path" "${paths[@]}"
}

# A source folder the user names: its own contents (digested) are the recipe's input, so any change rebuilds.
build_source_folder() {
  check_target_arch
  local xnn; xnn=$(cd "$XNNPACK_SOURCE" && pwd) || exit 1
  [ -f "$xnn/include/xnnpack.h" ] || { say "$XNNPACK_SOURCE is not an XNNPACK source folder (no include/xnnpack.h)"; exit 1; }
  local third; third=$(dirname "$xnn")
  local cpuinfo="${CPUINFO_SOURCE_DIR:-$third/cpuinfo}" pthreadpool="${PTHREADPOOL_SOURCE_DIR:-$third/pthreadpool}"
  local fxdiv="${FXDIV_SOURCE_DIR:-$third/FXdiv}" kleidiai="${KLEIDIAI_SOURCE_DIR:-$third/kleidiai}"
  local dir recipe="" digest
  for dir in "$cpuinfo" "$pthreadpool"; do
    [ -f "$dir/CMakeLists.txt" ] || { say "no source folder $dir (set CPUINFO_SOURCE_DIR / PTHREADPOOL_SOURCE_DIR)"; exit 1; }
  done
  # FXdiv only where XNNPACK or its pthreadpool use it (newer XNNPACKs do not); KleidiAI only where enabled.
  if ! grep -q FXDIV_SOURCE_DIR "$xnn/CMakeLists.txt" "$pthreadpool/CMakeLists.txt"; then fxdiv=""; fi
  [ -z "$fxdiv" ] || [ -f "$fxdiv/CMakeLists.txt" ] || { say "no FXdiv source folder $fxdiv (set FXDIV_SOURCE_DIR)"; exit 1; }
  if [ "$KLEIDIAI" != ON ] || [ ! -d "$kleidiai" ]; then kleidiai=""; fi
  digest=$(tree_digest "$xnn")
  for dir in "$cpuinfo" "$pthreadpool" "$fxdiv" "$kleidiai"; do
    [ -n "$dir" ] && recipe+=" $(basename "$dir")=$(tree_digest "$dir")"
  done
  recipe="source xnnpack=$digest$recipe $(recipe_common)"
  local version="source:$(basename "$xnn")"
  if git -C "$xnn" rev-parse HEAD >/dev/null 2>&1; then version=$(git -C "$xnn" rev-parse HEAD); fi
  build_pinned "source" "$version" "$digest" "$recipe" "$xnn" "$cpuinfo" "$pthreadpool" "$fxdiv" "$kleidiai"
}

# One set-up at a time per cache: two at once (builds started together, or a build beside a CI run) would
# unpack and build into the same work folders and race for apt's lock.
mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.setup-deps.lock"
if ! flock -n 9; then
  say "waiting for another setup-deps.sh using $CACHE_ROOT to finish (lock: $CACHE_ROOT/.setup-deps.lock)"
  flock 9
fi

install_packages
if [ -n "${XNNPACK_PREFIX:-}" ] || { [ -z "$PIN" ] && [ -z "$XNNPACK_SOURCE" ]; }; then
  build_xnnpack
elif [ -n "$XNNPACK_SOURCE" ]; then
  [ -z "$PIN" ] || { say "choose one of a pin ($PIN) and a source folder ($XNNPACK_SOURCE)"; exit 2; }
  build_source_folder
else
  build_pin
fi
echo "XNNPACK_PREFIX=$PREFIX"
