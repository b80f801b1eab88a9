# Stock ExecuTorch (the real runtime, built from ../shared/vendor by tools/setup-executorch.sh) serving
# `xpack export --executorch` files: every exported entry served from the file, nothing packed anew,
# outputs bit-identical to no cache, and a perturbed file changes the outputs. Label "executorch".
# The runtime is built over the XNNPACK xpack is built with (XNNPACK_PREFIX), as ExecuTorch's version
# XPACK_ET_VERSION: v1.4.0 (ExecuTorch's own pin is 1adaa7c7) or main-cff6f4dd (pin 92a7ad50).
# Every test skips (77) with a message when ../shared/vendor is absent; the first one builds flatc and the
# runtime (minutes, once per cache: ~/.cache/xpack-deps), the others wait for it.
include(${CMAKE_CURRENT_LIST_DIR}/et_version.cmake)

set(_et_dir ${CMAKE_CURRENT_LIST_DIR})
set(_et_env "XPACK=$<TARGET_FILE:xpack>" "XPACK_GENMODEL=$<TARGET_FILE:xpack-genmodel>"
            "XNNPACK_PREFIX=${XNNPACK_PREFIX}" "XPACK_ET_VERSION=${XPACK_ET_VERSION}"
            "XPACK_VENDOR_DIR=${XPACK_VENDOR_DIR}")

function(xpack_et_test name)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 ENVIRONMENT "${_et_env}" LABELS "executorch"
                       TIMEOUT 900 FIXTURES_REQUIRED et_runtime)
endfunction()

# Builds (or finds cached) the runtime and et_harness once, before the others.
add_test(NAME et_runtime_setup COMMAND bash -c "source '${_et_dir}/env.sh' && echo \"runtime: $ET_PREFIX\" && echo \"harness: $ET_HARNESS\"")
set_tests_properties(et_runtime_setup PROPERTIES SKIP_RETURN_CODE 77 ENVIRONMENT "${_et_env}"
                     LABELS "executorch" TIMEOUT 1800 FIXTURES_SETUP et_runtime)

# Real files: the XNNPACK ones of ../shared/testdata/real (MANIFEST.md), all served in full. The partially
# delegated ones run their other operators on the few portable kernels tests/executorch/portable_kernels.cpp
# registers; img_dec_small_q8 and img_enc_fp32 hold a deconvolution, which XNNPACK packs before asking.
foreach(real add clamp conv dwconv_inblob_2024 dynamic_mul linear129 qint8_linear small_cnn
             person_detect_fp32 person_detect_int8 stress_mlp)
  xpack_et_test(et_serve_real_${real} ${_et_dir}/et_serve.sh ${XPACK_REAL_TESTDATA}/${real}.pte)
endforeach()
foreach(real img_dec_small_q8 img_enc_fp32)
  xpack_et_test(et_serve_real_${real} ${_et_dir}/et_serve.sh --packs-before-asking ${XPACK_REAL_TESTDATA}/${real}.pte)
endforeach()

# Generated programs (xpack-genmodel): fp32 multi-method LLM-like with shared weights (also with its
# weights in a .ptd), 4-bit qc4w + qb4w, qc8, fp16, an MLP with a .ptd, a CNN, deconvolution, bmm.
# The LLM-like stacks overflow to inf/NaN with unit inputs (their random weights are not trained), and
# the test refuses non-finite outputs: their inputs are scaled by 0.1.
xpack_et_test(et_serve_gen_llm ${_et_dir}/et_serve.sh --input-scale 0.1 --gen llm --size 4M)
xpack_et_test(et_serve_gen_llm_ptd ${_et_dir}/et_serve.sh --input-scale 0.1 --gen llm --size 4M --ptd)
xpack_et_test(et_serve_gen_llm_q4 ${_et_dir}/et_serve.sh --input-scale 0.1 --gen llm-q4 --size 4M)
xpack_et_test(et_serve_gen_qd8_qc8w ${_et_dir}/et_serve.sh --gen qd8-qc8w)
xpack_et_test(et_serve_gen_fp16 ${_et_dir}/et_serve.sh --gen fp16)
xpack_et_test(et_serve_gen_ptd ${_et_dir}/et_serve.sh --gen ptd)
xpack_et_test(et_serve_gen_conv ${_et_dir}/et_serve.sh --gen conv)
xpack_et_test(et_serve_gen_deconv ${_et_dir}/et_serve.sh --packs-before-asking --gen deconv)
xpack_et_test(et_serve_gen_bmm ${_et_dir}/et_serve.sh --gen bmm)
# bf16 fully-connected layers (input, filters and output bf16): only ExecuTorch main runs them, defining each
# layer into fp32 and converting to the bf16 output (v1.4.0 defines the bf16 output, which XNNPACK refuses),
# so only over main. Where XNNPACK has no bf16 kernel it packs fp32 copies of the weights, which no cache names:
# nothing is exported, and outputs with ExecuTorch's weight cache on must still equal those without.
if(XPACK_ET_VERSION STREQUAL "main-cff6f4dd")
  xpack_et_test(et_serve_gen_bf16 ${_et_dir}/et_serve.sh --gen bf16)
endif()
# Vtables declaring fewer inline bytes than their fields need, as ExecuTorch's training export writes them
# (issue 16): the runtime loads them with its flatbuffers verifier on (InternalConsistency), as xpack reads them.
xpack_et_test(et_serve_gen_conv_short_vtables ${_et_dir}/et_serve.sh --gen conv --short-vtables)
xpack_et_test(et_serve_gen_llm_q4_short_vtables ${_et_dir}/et_serve.sh --input-scale 0.1 --gen llm-q4 --size 4M
              --short-vtables)

# What stock ExecuTorch does with the file: read-only path, two processes at once, a file left from
# another XNNPACK (seeds changed), its own cache at the first and second launch.
xpack_et_test(et_file_handling ${_et_dir}/et_file_handling.sh)

# A named key in both the program and a .ptd: ExecuTorch reads the .ptd's bytes, and xpack packs those.
xpack_et_test(et_key_in_both ${_et_dir}/et_key_in_both.sh)

# xpack's loader inside ExecuTorch (libpack/et_adapter, xpack::et_adapter): every look-up hits, outputs identical, and
# docs/TRUST.md's refusals still refuse inside ExecuTorch. Installs xpack and builds the adapter harness
# against it, as an app would.
xpack_et_test(et_adapter ${_et_dir}/et_adapter.sh)
set_property(TEST et_adapter APPEND PROPERTY ENVIRONMENT "XPACK_BUILD_DIR=${CMAKE_BINARY_DIR}"
             "XPC_TAMPER=$<TARGET_FILE:xpc_tamper>" "XPACK_REAL_TESTDATA=${XPACK_REAL_TESTDATA}")
