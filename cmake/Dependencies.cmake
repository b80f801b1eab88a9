# Finds XNNPACK (static, from tools/setup-deps.sh or XNNPACK_PREFIX), cpuinfo, pthreadpool, xxHash, zstd.
find_package(Threads REQUIRED)

if(NOT XNNPACK_PREFIX AND DEFINED ENV{XNNPACK_PREFIX})
  set(XNNPACK_PREFIX "$ENV{XNNPACK_PREFIX}")
endif()
find_path(XNNPACK_INCLUDE_DIR xnnpack.h HINTS "${XNNPACK_PREFIX}/include" NO_DEFAULT_PATH)
find_library(XNNPACK_LIBRARY NAMES XNNPACK HINTS "${XNNPACK_PREFIX}/lib" NO_DEFAULT_PATH)
find_library(XNNPACK_MICROKERNELS_LIBRARY NAMES microkernels-prod HINTS "${XNNPACK_PREFIX}/lib" NO_DEFAULT_PATH)
if(NOT XNNPACK_INCLUDE_DIR OR NOT XNNPACK_LIBRARY)
  message(FATAL_ERROR "XNNPACK not found under XNNPACK_PREFIX='${XNNPACK_PREFIX}'. "
                      "Run tools/setup-deps.sh and pass -DXNNPACK_PREFIX=<the prefix it prints>.")
endif()
find_library(CPUINFO_LIBRARY cpuinfo REQUIRED)
find_library(PTHREADPOOL_LIBRARY pthreadpool REQUIRED)
find_library(XXHASH_LIBRARY xxhash REQUIRED)
find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
find_library(ZSTD_LIBRARY zstd REQUIRED)
find_path(ZSTD_INCLUDE_DIR zstd.h REQUIRED)
find_library(MATH_LIBRARY m)

add_library(xpack_xnnpack INTERFACE)
target_include_directories(xpack_xnnpack SYSTEM INTERFACE "${XNNPACK_INCLUDE_DIR}")
set(_xnn_libs "${XNNPACK_LIBRARY}")
if(XNNPACK_MICROKERNELS_LIBRARY)
  list(APPEND _xnn_libs "${XNNPACK_MICROKERNELS_LIBRARY}")
endif()
# XNNPACK's static archive holds a few C++ objects, hence stdc++.
target_link_libraries(xpack_xnnpack INTERFACE ${_xnn_libs} "${PTHREADPOOL_LIBRARY}" "${CPUINFO_LIBRARY}"
                      Threads::Threads stdc++ ${MATH_LIBRARY})

add_library(xpack_xxhash INTERFACE)
target_include_directories(xpack_xxhash SYSTEM INTERFACE "${XXHASH_INCLUDE_DIR}")
target_link_libraries(xpack_xxhash INTERFACE "${XXHASH_LIBRARY}")

add_library(xpack_zstd INTERFACE)
target_include_directories(xpack_zstd SYSTEM INTERFACE "${ZSTD_INCLUDE_DIR}")
target_link_libraries(xpack_zstd INTERFACE "${ZSTD_LIBRARY}")
