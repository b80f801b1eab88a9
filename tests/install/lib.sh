# Shared by the install tests: arguments, a temporary directory, an install of the build into it, a model.
# Usage: source lib.sh BUILD_DIR SOURCE_DIR GENMODEL C_COMPILER NINJA
XP_BUILD=$1 XP_SOURCE=$2 XP_GENMODEL=$3 XP_CC=$4 XP_NINJA=$5
set -euo pipefail
XP_TMP=$(mktemp -d)
trap 'rm -rf "$XP_TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Installs the build into a staging prefix, then moves it: the install must not depend on where it is.
# Sets XP_PREFIX.
install_xpack() {
  local stage="$XP_TMP/stage"
  XP_PREFIX="$XP_TMP/prefix"
  cmake --install "$XP_BUILD" --prefix "$stage" > "$XP_TMP/install.log" || { cat "$XP_TMP/install.log"; fail "cmake --install"; }
  mv "$stage" "$XP_PREFIX"
  if grep -rl -e "$XP_BUILD" -e "$XP_SOURCE" -e "$stage" "$XP_PREFIX/lib/cmake" "$XP_PREFIX/lib/pkgconfig"; then
    fail "the installed package names the build tree, the source tree or the install-time prefix (above)"
  fi
}

# Configures and builds a CMake project against the install. Usage: build_project SOURCE BINARY [-Dvar=value ...]
build_project() {
  local src=$1 bin=$2
  shift 2
  cmake -S "$src" -B "$bin" -G Ninja -DCMAKE_MAKE_PROGRAM="$XP_NINJA" -DCMAKE_C_COMPILER="$XP_CC" \
        -DCMAKE_PREFIX_PATH="$XP_PREFIX" "$@" > "$bin.configure.log" 2>&1 || { cat "$bin.configure.log"; fail "configuring $src"; }
  "$XP_NINJA" -C "$bin" > "$bin.build.log" 2>&1 || { cat "$bin.build.log"; fail "building $src"; }
}
