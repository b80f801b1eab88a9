# Tests of a cross build (tools/dev.sh --arch aarch64): target programs run under qemu-user, as the CPUs of
# phones. CMAKE_CROSSCOMPILING_EMULATOR (the toolchain file's qemu-aarch64 over the cross sysroot) runs them;
# the script adds -cpu per model. XPACK_HOST_XPACK: an xpack built for this machine, to check that it refuses
# an aarch64 cache (tools/dev.sh passes the default build's when there is one).
set(XPACK_HOST_XPACK "" CACHE FILEPATH "An xpack for the build machine (tests/cross: refusal of an aarch64 cache)")
if(NOT CMAKE_CROSSCOMPILING_EMULATOR)
  message(WARNING "cross build without an emulator (qemu-aarch64 not found): no tests")
  return()
endif()
# CPU models of qemu 7.2 that span what phones' XNNPACK kernels choose from: Cortex-A53 (ARMv8.0: no fp16
# arithmetic, no dot product), Cortex-A76 (ARMv8.2: fp16, dot product), max (everything qemu emulates: i8mm,
# bf16, SVE2, SME).
list(JOIN CMAKE_CROSSCOMPILING_EMULATOR " " _xpack_emulator)
string(REGEX REPLACE " -cpu [^ ]+" "" _xpack_emulator "${_xpack_emulator}")
add_test(NAME cross_arm64_devices
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/arm64_devices.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 cortex-a53 cortex-a76 max)
set_tests_properties(cross_arm64_devices PROPERTIES LABELS cross
  ENVIRONMENT "XPACK_EMULATOR=${_xpack_emulator};XPACK_REAL_TESTDATA=${XPACK_REAL_TESTDATA};XPACK_HOST_XPACK=${XPACK_HOST_XPACK}")
