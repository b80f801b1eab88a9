#!/usr/bin/env bash
# Makes xpack's build dependencies available, idempotently:
#  - Debian bookworm packages: cmake, ninja, libzstd-dev, libxxhash-dev, flatbuffers-compiler, clang, ...
#  - cpuinfo and pthreadpool from Debian trixie (binary packages that run on bookworm's glibc);
#  - XNNPACK 0.0~git20241108.4ea82e5 built from Debian trixie's source tarball (SHA-256 checked) into a
#    cache prefix outside the checkout, so a second run costs seconds.
# The trixie apt entry is derived from this machine's own apt configuration (the URI it already uses for
# bookworm), pinned at priority 1 so that nothing is ever upgraded from it implicitly (glibc stays).
#
# Prints the XNNPACK prefix on the last line of stdout as XNNPACK_PREFIX=...
# Environment:
#   XNNPACK_PREFIX      use an existing XNNPACK install of this API level instead of building one
#   XPACK_DEPS_CACHE    where to build and keep XNNPACK (default: ~/.cache/xpack-deps)
#   XPACK_SKIP_APT=1    do not touch apt (everything is already installed)
set -euo pipefail

XNNPACK_VERSION="0.0~git20241108.4ea82e5"
XNNPACK_TARBALL="xnnpack_${XNNPACK_VERSION}.orig.tar.xz"
XNNPACK_SHA256="90bde2caef0f880f627bab0dc805a86c4b8070cd98e3243db3046ab3f3be1a99"
CACHE_ROOT="${XPACK_DEPS_CACHE:-${HOME:-/root}/.cache/xpack-deps}"
# Changing any build option must change the prefix, so an old build is never reused for a new recipe.
BUILD_RECIPE="v1 static release prod-microkernels no-tests no-benchmarks kleidiai-off pic system-deps"
RECIPE_TAG=$(printf '%s' "$BUILD_RECIPE" | sha256sum | cut -c1-12)

say() { echo "setup-deps: $*" >&2; }
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"

bookworm_packages=(cmake ninja-build pkg-config gcc g++ python3 xz-utils ca-certificates
  libzstd-dev libxxhash-dev flatbuffers-compiler libfp16-dev libfxdiv-dev libpsimd-dev
  clang libclang-rt-14-dev qemu-user zstd)
trixie_packages=(libcpuinfo-dev libpthreadpool-dev)

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

build_xnnpack() {
  if [ -n "${XNNPACK_PREFIX:-}" ]; then
    [ -f "$XNNPACK_PREFIX/include/xnnpack.h" ] || { say "XNNPACK_PREFIX=$XNNPACK_PREFIX has no include/xnnpack.h"; exit 1; }
    say "using XNNPACK from XNNPACK_PREFIX=$XNNPACK_PREFIX"
    PREFIX="$XNNPACK_PREFIX"; return
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
  ninja -C "$work/build" -j"$(nproc)" > "$work/build.log" 2>&1 \
    || { say "XNNPACK build failed; see $work/build.log"; tail -20 "$work/build.log" >&2; exit 1; }
  rm -rf "$PREFIX.tmp"
  ninja -C "$work/build" install > "$work/install.log" 2>&1
  printf '%s\n%s\n%s\n' "$XNNPACK_VERSION" "$XNNPACK_SHA256" "$BUILD_RECIPE" > "$PREFIX.tmp/.complete"
  rm -rf "$PREFIX"; mv "$PREFIX.tmp" "$PREFIX"
  rm -rf "$work"
  say "XNNPACK built in $((SECONDS - t0)) s into $PREFIX"
}

install_packages
build_xnnpack
echo "XNNPACK_PREFIX=$PREFIX"
