# Cross builds for 64-bit Arm Linux (the CPUs of phones), from an x86-64 Debian machine: clang with
# --target=aarch64-linux-gnu over the sysroot and runtime of Debian's gcc-aarch64-linux-gnu and
# libc6-dev-arm64-cross (tools/setup-deps.sh --arch aarch64 installs them).
#
# clang rather than the cross gcc: bookworm's gcc-12 for aarch64 stops with an internal compiler error on a
# KleidiAI source that ExecuTorch's XNNPACK builds (../shared/vendor/README.md). XPACK_CROSS_CLANG names the
# compiler (default clang-19, the oldest that builds XNNPACK's SME2 kernels).
#
# Programs built with it run here under qemu-user: CMAKE_CROSSCOMPILING_EMULATOR is
# tools/qemu-aarch64-device.sh (qemu-aarch64 over the cross sysroot, with a /proc/cpuinfo and CPU topology of
# the CPU model rather than the build machine's), as the CPU model XPACK_QEMU_CPU (default max: every feature
# qemu knows). The CPU model is what XNNPACK's kernel choice sees (cpuinfo reads its features from the
# auxiliary vector, its microarchitecture from /proc/cpuinfo), so it decides how weights are packed.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(XPACK_CROSS_TRIPLE aarch64-linux-gnu)
set(XPACK_CROSS_SYSROOT /usr/${XPACK_CROSS_TRIPLE})

if(DEFINED ENV{XPACK_CROSS_CLANG})
  set(XPACK_CROSS_CLANG "$ENV{XPACK_CROSS_CLANG}")
elseif(NOT XPACK_CROSS_CLANG)
  set(XPACK_CROSS_CLANG clang-19)
endif()
string(REPLACE "clang" "clang++" _xpack_cross_clangxx "${XPACK_CROSS_CLANG}")
set(CMAKE_C_COMPILER ${XPACK_CROSS_CLANG})
set(CMAKE_CXX_COMPILER ${_xpack_cross_clangxx})
set(CMAKE_ASM_COMPILER ${XPACK_CROSS_CLANG})
set(CMAKE_C_COMPILER_TARGET ${XPACK_CROSS_TRIPLE})
set(CMAKE_CXX_COMPILER_TARGET ${XPACK_CROSS_TRIPLE})
set(CMAKE_ASM_COMPILER_TARGET ${XPACK_CROSS_TRIPLE})

# Libraries and headers come from the target's side only: the cross sysroot, and the prefixes given in
# CMAKE_PREFIX_PATH / CMAKE_FIND_ROOT_PATH (XNNPACK's and the target libraries' of setup-deps.sh).
list(APPEND CMAKE_FIND_ROOT_PATH ${XPACK_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

if(DEFINED ENV{XPACK_QEMU_CPU})
  set(XPACK_QEMU_CPU "$ENV{XPACK_QEMU_CPU}")
elseif(NOT XPACK_QEMU_CPU)
  set(XPACK_QEMU_CPU max)
endif()
find_program(XPACK_QEMU_AARCH64 qemu-aarch64)
if(XPACK_QEMU_AARCH64)
  get_filename_component(_xpack_qemu_device ${CMAKE_CURRENT_LIST_DIR}/../../tools/qemu-aarch64-device.sh ABSOLUTE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${_xpack_qemu_device} --qemu ${XPACK_QEMU_AARCH64} --sysroot ${XPACK_CROSS_SYSROOT}
      -cpu ${XPACK_QEMU_CPU})
endif()
