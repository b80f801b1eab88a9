# For the standalone clang projects of the sanitizer tests (tests/fuzz, tests/tsan): xpack::XNNPACK and the other
# imported targets of xpackDependencies.cmake, found in XNNPACK_PREFIX (as tools/setup-deps.sh built it) the way
# the main build finds them, with Threads::Threads. A missing dependency stops the configuration, naming `what`.
#   xpack_xnnpack_at_prefix(<what>)
set(_xpack_cmake_dir ${CMAKE_CURRENT_LIST_DIR})
macro(xpack_xnnpack_at_prefix what)
  set(THREADS_PREFER_PTHREAD_FLAG ON)
  find_package(Threads REQUIRED)
  set(_xpack_xnnpack_prefix "${XNNPACK_PREFIX}")
  include(${_xpack_cmake_dir}/xpackDependencies.cmake)
  if(_xpack_missing_deps)
    message(FATAL_ERROR "${what}: not found: ${_xpack_missing_deps}")
  endif()
endmacro()
