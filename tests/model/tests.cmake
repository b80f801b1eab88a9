# ExecuTorch programs end to end: pack, verify, run with and without the cache.
# Whether this XNNPACK offers depthwise convolution weights to a weights cache (libpack/loader/xnn_compat.h):
# then delegates of depthwise convolutions alone have something to pack. And whether it has a bf16 fully-connected.
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_INCLUDES "${PROJECT_SOURCE_DIR}/libpack" "${PROJECT_SOURCE_DIR}/libpack/include"
    "${XPACK_XNNPACK_INCLUDE_DIR}")
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
# The header must compile here at all: otherwise both checks below would quietly answer "4ea82e5-like".
check_c_source_compiles("#include \"loader/xnn_compat.h\"
int xpack_probe_only;" XPACK_XNN_COMPAT_HEADER_COMPILES)
if(NOT XPACK_XNN_COMPAT_HEADER_COMPILES)
  message(FATAL_ERROR "libpack/loader/xnn_compat.h does not compile with CMAKE_REQUIRED_INCLUDES of tests/model/tests.cmake")
endif()
check_c_source_compiles("#include \"loader/xnn_compat.h\"
#if !XPACK_XNN_CACHES_DEPTHWISE_WEIGHTS
#error 4ea82e5-like
#endif
int xpack_probe_only;" XPACK_XNN_CACHES_DEPTHWISE_WEIGHTS)
check_c_source_compiles("#include \"loader/xnn_compat.h\"
#if !XPACK_XNN_HAS_BF16_FULLY_CONNECTED
#error 4ea82e5-like
#endif
int xpack_probe_only;" XPACK_XNN_HAS_BF16_FULLY_CONNECTED)
unset(CMAKE_REQUIRED_INCLUDES)
unset(CMAKE_TRY_COMPILE_TARGET_TYPE)
if(XPACK_XNN_CACHES_DEPTHWISE_WEIGHTS)
  set(_xpack_depthwise_packs 1)
else()
  set(_xpack_depthwise_packs 0)
endif()
add_test(NAME model_real_files COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/real_files.sh $<TARGET_FILE:xpack> ${XPACK_REAL_TESTDATA}
         ${_xpack_depthwise_packs})
set_tests_properties(model_real_files PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME model_generated COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/generated.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
# bf16 fully-connected layers, as far as this XNNPACK build can run them (bf16.sh says which case applies and
# skips, saying why, where XNNPACK has no bf16 fully-connected or no kernel for it here).
if(XPACK_XNN_HAS_BF16_FULLY_CONNECTED)
  set(_xpack_has_bf16_fc 1)
else()
  set(_xpack_has_bf16_fc 0)
endif()
add_test(NAME model_bf16 COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/bf16.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
         ${_xpack_has_bf16_fc})
set_tests_properties(model_bf16 PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME model_identity COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/model_identity.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
# Two programs giving one content key different bytes are refused by pack (one cache would serve one of them).
add_test(NAME model_shared_content_keys
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/shared_content_keys.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
# Identities pinned for generated programs of every kind of weight: a change would make older caches miss.
add_test(NAME model_identity_golden
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/identity_golden.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
# The corruption matrix (tests/core/corruption_matrix.sh) on caches of a generated program and of real ones.
add_test(NAME model_corruption_generated
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/corruption_model.sh generated $<TARGET_FILE:xpack> $<TARGET_FILE:flipbyte> $<TARGET_FILE:xpack-genmodel>)
foreach(model stress_mlp img_enc_fp32)
  add_test(NAME model_corruption_${model}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/corruption_model.sh real $<TARGET_FILE:xpack> $<TARGET_FILE:flipbyte> ${XPACK_REAL_TESTDATA} ${model})
  set_tests_properties(model_corruption_${model} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()
# SIGKILL at random points of `xpack pack`: the target is always a complete file; stale temporary files.
add_test(NAME model_crash_safety COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/crash_safety.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
# Ordinary pack failures (bad inputs, failing writes, unwritable places): no temporary file, target intact.
add_test(NAME model_pack_failures COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/pack_failures.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
# Eight processes run with the same cache at once (mapped and --read): identical outputs, file unchanged.
add_test(NAME model_concurrent_runs COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/concurrent_runs.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel> ${XPACK_REAL_TESTDATA})
# xpack pack --jobs 1, 2 and 4 give the same bytes (generated programs, several at once, real files if present).
# pack-reverse: the pipeline with its workers taking delegates last first (XPACK_PACK_ORDER_REVERSE).
add_executable(pack-reverse ${CMAKE_CURRENT_LIST_DIR}/pack_reverse.c)
target_link_libraries(pack-reverse PRIVATE xpack_pack)
set_target_properties(pack-reverse PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
add_test(NAME model_parallel_pack COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/parallel_pack.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
         $<TARGET_FILE:pack-reverse> ${XPACK_REAL_TESTDATA})
add_test(NAME model_check_regions COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_regions.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel> $<TARGET_FILE:flipbyte>)
# A cache packed with one XNNPACK build, run by an xpack built with another: refused whole, outputs identical.
# Needs a second xpack (built over another pin: tools/dev.sh test builds one when ../shared/vendor is present).
set(XPACK_OTHER_XNNPACK_XPACK "" CACHE FILEPATH "An xpack built with another XNNPACK, for model_cross_xnnpack")
add_test(NAME model_cross_xnnpack COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cross_xnnpack.sh $<TARGET_FILE:xpack>
         "${XPACK_OTHER_XNNPACK_XPACK}" $<TARGET_FILE:xpack-genmodel>)
set_tests_properties(model_cross_xnnpack PROPERTIES SKIP_RETURN_CODE 77)

# What xpack promises about its outputs: never onto an input or a non-regular file, no file removed that it
# did not make, long names, nothing left by a pack --zstd or verify --model killed with SIGKILL.
add_test(NAME model_outputs COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/outputs.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
# A quantized weight is named with what XNNPACK packs with it: the same bytes with other scales are never served
# another program's packing (quantized_identity.sh).
add_test(NAME model_quantized_identity
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/quantized_identity.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
# The same weight bytes in another shape or node (equal XNNPACK seeds) are never served each other's packing
# (shape_identity.sh).
add_test(NAME model_shape_identity
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/shape_identity.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
# A crafted external size is refused at the reshape, before `run` allocates buffers by it.
add_test(NAME model_declared_external_sizes
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/declared_external_sizes.sh $<TARGET_FILE:xpack> ${XPACK_REAL_TESTDATA}
                 ${PROJECT_SOURCE_DIR}/tests/gen)
set_tests_properties(model_declared_external_sizes PROPERTIES SKIP_RETURN_CODE 77)
# A field of a small program whose value makes xpack spend memory (num_externs, a convolution's padding), or that
# is malformed rather than unsupported (datatype 0), is refused (amplifying_fields.sh).
add_test(NAME model_amplifying_fields
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/amplifying_fields.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 ${PROJECT_SOURCE_DIR}/tests/gen ${PROJECT_SOURCE_DIR}/format/xnnpack_graph.fbs)
# Weights changed in place under content keys: verify --model names the changed input, run -v claims no more than
# the graph (stale_weights.sh).
add_test(NAME model_stale_weights
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/stale_weights.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
