# Tests of a cross build (tools/dev.sh --arch aarch64): target programs run under qemu-user, as the CPUs of
# phones. CMAKE_CROSSCOMPILING_EMULATOR (the toolchain file's qemu-aarch64 over the cross sysroot) runs them.
# XPACK_HOST_XPACK: an xpack built for this machine, to check that it refuses an aarch64 cache (tools/dev.sh
# passes the one CI built first).
set(XPACK_HOST_XPACK "" CACHE FILEPATH "An xpack for the build machine (tests/cross: refusal of an aarch64 cache)")
if(NOT CMAKE_CROSSCOMPILING_EMULATOR)
  message(WARNING "cross build without an emulator (qemu-aarch64 not found): no tests")
  return()
endif()
list(JOIN CMAKE_CROSSCOMPILING_EMULATOR " " _xpack_emulator)
string(REGEX REPLACE " -cpu [^ ]+" "" _xpack_emulator "${_xpack_emulator}")

# qemu/xpack and qemu/xpack-genmodel: the target programs as commands (no binfmt_misc here), run as the CPU
# model XPACK_QEMU_CPU (default max), for the scripts that take an xpack to run.
foreach(_tool xpack xpack-genmodel)
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/qemu/${_tool}
       CONTENT "#!/bin/sh\n# ${_tool} for ${CMAKE_SYSTEM_PROCESSOR}, under qemu as the CPU model XPACK_QEMU_CPU (default max)\nexec ${_xpack_emulator} -cpu \"\${XPACK_QEMU_CPU:-max}\" \"$<TARGET_FILE:${_tool}>\" \"$@\"\n"
       FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endforeach()

# CPU models of qemu 7.2 that span what phones' XNNPACK kernels choose from: Cortex-A53 (ARMv8.0: no fp16
# arithmetic, no dot product), Cortex-A76 (ARMv8.2: fp16, dot product), max (everything qemu emulates: i8mm,
# bf16, SVE2, SME).
add_test(NAME cross_arm64_devices
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/arm64_devices.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 cortex-a53 cortex-a76 max)
set_tests_properties(cross_arm64_devices PROPERTIES LABELS cross
  ENVIRONMENT "XPACK_EMULATOR=${_xpack_emulator};XPACK_REAL_TESTDATA=${XPACK_REAL_TESTDATA};XPACK_HOST_XPACK=${XPACK_HOST_XPACK}")

# The replay's shape predictions against this XNNPACK's reshape, run as the target's CPU (max).
include(${PROJECT_SOURCE_DIR}/tests/core/shape_rules.cmake)
xpack_add_shape_rules_test(cross_shape_rules)
set_tests_properties(cross_shape_rules PROPERTIES LABELS cross)

# Stock ExecuTorch for aarch64 (the runtime of tests/executorch, cross-built over the same XNNPACK) serving
# `xpack export --executorch` files packed as a Cortex-A76, on a Cortex-A76: tests/executorch/et_serve.sh
# with xpack, xpack-genmodel and et_harness all under qemu as that CPU. Skip (77) without ../shared/vendor.
include(${PROJECT_SOURCE_DIR}/tests/executorch/et_version.cmake)
set(_cross_et_dir ${PROJECT_SOURCE_DIR}/tests/executorch)
set(_cross_et_env "XPACK=${CMAKE_BINARY_DIR}/qemu/xpack" "XPACK_GENMODEL=${CMAKE_BINARY_DIR}/qemu/xpack-genmodel"
    "XNNPACK_PREFIX=${XNNPACK_PREFIX}" "XPACK_ET_VERSION=${XPACK_ET_VERSION}" "XPACK_VENDOR_DIR=${XPACK_VENDOR_DIR}"
    "XPACK_TARGET_TOOLCHAIN=${CMAKE_TOOLCHAIN_FILE}" "XPACK_EMULATOR=${_xpack_emulator}" "XPACK_QEMU_CPU=cortex-a76")
add_test(NAME cross_et_runtime_setup
         COMMAND bash -c "source '${_cross_et_dir}/env.sh' && echo \"runtime: $ET_PREFIX\"")
set_tests_properties(cross_et_runtime_setup PROPERTIES SKIP_RETURN_CODE 77 ENVIRONMENT "${_cross_et_env}"
                     LABELS "cross;executorch" TIMEOUT 1800 FIXTURES_SETUP cross_et_runtime)
function(xpack_cross_et_test name)
  add_test(NAME ${name} COMMAND bash ${_cross_et_dir}/et_serve.sh ${ARGN})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 ENVIRONMENT "${_cross_et_env}"
                       LABELS "cross;executorch" TIMEOUT 1800 FIXTURES_REQUIRED cross_et_runtime)
endfunction()
xpack_cross_et_test(cross_et_serve_gen_llm --input-scale 0.1 --gen llm --size 2M)
xpack_cross_et_test(cross_et_serve_gen_qd8_qc8w --gen qd8-qc8w)
xpack_cross_et_test(cross_et_serve_gen_fp16 --gen fp16)
foreach(real person_detect_int8 small_cnn linear129)
  xpack_cross_et_test(cross_et_serve_real_${real} ${XPACK_REAL_TESTDATA}/${real}.pte)
endforeach()

# The same runtime with xpack's loader inside it (et_harness_xpack, cross-built against this build installed),
# given one cache per CPU model in a bundle: on each device CPU the adapter keeps one it serves whole.
add_test(NAME cross_et_adapter_devices
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cross/et_adapter_devices.sh cortex-a53 cortex-a76 cortex-a76:cortex-a55,cortex-a76 max
                 --on cortex-a76 cortex-a76:cortex-a55,cortex-a76 max)
set_tests_properties(cross_et_adapter_devices PROPERTIES SKIP_RETURN_CODE 77
  ENVIRONMENT "${_cross_et_env};XPACK_BUILD_DIR=${CMAKE_BINARY_DIR};XPACK_REAL_TESTDATA=${XPACK_REAL_TESTDATA}"
  LABELS "cross;executorch" TIMEOUT 1800 FIXTURES_REQUIRED cross_et_runtime)

# tools/phone-bundle.sh over this build: the caches it keeps serve every look-up on every CPU given, a big.LITTLE
# phone (Cortex-A55 + Cortex-A76) included.
add_test(NAME cross_phone_bundle
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/phone_bundle.sh ${CMAKE_BINARY_DIR} $<TARGET_FILE:xpack-genmodel>
                 max cortex-a76 cortex-a76:cortex-a55,cortex-a76 cortex-a76:cortex-a55 cortex-a53)
set_tests_properties(cross_phone_bundle PROPERTIES LABELS cross
  ENVIRONMENT "XPACK_EMULATOR=${_xpack_emulator};XPACK_REAL_TESTDATA=${XPACK_REAL_TESTDATA}")
