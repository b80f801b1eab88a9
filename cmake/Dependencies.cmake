# Finds XNNPACK (static, from tools/setup-deps.sh or XNNPACK_PREFIX), cpuinfo, pthreadpool, xxHash, zstd.
# The imported targets are defined by xpackDependencies.cmake, which the installed package uses too; the
# names the build links (xpack_xnnpack, xpack_xxhash, xpack_zstd) are aliases of them, so exported targets
# name xpack::XNNPACK etc. and an installed xpack finds its dependencies itself.
find_package(Threads REQUIRED)

if(NOT XNNPACK_PREFIX AND DEFINED ENV{XNNPACK_PREFIX})
  set(XNNPACK_PREFIX "$ENV{XNNPACK_PREFIX}")
endif()
set(_xpack_xnnpack_prefix "${XNNPACK_PREFIX}")
include(${CMAKE_CURRENT_LIST_DIR}/xpackDependencies.cmake)
if(_xpack_missing_deps MATCHES "XNNPACK")
  message(FATAL_ERROR "XNNPACK not found under XNNPACK_PREFIX='${XNNPACK_PREFIX}'. "
                      "Run tools/setup-deps.sh and pass -DXNNPACK_PREFIX=<the prefix it prints>.")
elseif(_xpack_missing_deps)
  message(FATAL_ERROR "xpack's dependencies not found: ${_xpack_missing_deps} (tools/setup-deps.sh installs them)")
endif()

add_library(xpack_xnnpack ALIAS xpack::XNNPACK)
add_library(xpack_xxhash ALIAS xpack::xxhash)
add_library(xpack_zstd ALIAS xpack::zstd)
