# Sourced by the sanitizer tests' runners (tests/fuzz/run_fuzzers.sh, tests/tsan/run_tsan.sh): configures and builds
# one of their standalone clang projects. Ninja when there is one, chosen at the first configuration only (CMake
# refuses another generator for a configured folder); configured every run, which costs little once configured.
# clang_project_build SOURCE_DIR WORK CC XNNPACK_PREFIX WHAT: builds SOURCE_DIR into WORK/build, logs in
# WORK/{configure,build}.log; on failure prints the log's end and "FAIL: configuring WHAT" or "FAIL: building WHAT"
# and returns 1.
clang_project_build() {
  local source=$1 work=$2 cc=$3 xnnpack=$4 what=$5
  local gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  [ -f "$work/build/CMakeCache.txt" ] && gen=()
  cmake -S "$source" -B "$work/build" "${gen[@]}" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE= \
    -DXNNPACK_PREFIX="$xnnpack" >"$work/configure.log" 2>&1 ||
    { tail -40 "$work/configure.log"; echo "FAIL: configuring $what"; return 1; }
  cmake --build "$work/build" >"$work/build.log" 2>&1 ||
    { tail -40 "$work/build.log"; echo "FAIL: building $what"; return 1; }
}
