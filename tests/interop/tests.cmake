# ExecuTorch interop: `xpack export --executorch`, read back by an independent reader of ExecuTorch's
# packed-weights cache format (read_xpwc.py) and compared with the xpack cache entry by entry.
add_executable(interop-fixture ${CMAKE_CURRENT_LIST_DIR}/interop_fixture.c)
target_link_libraries(interop-fixture PRIVATE xpack_pack m)
set_target_properties(interop-fixture PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

add_test(NAME interop_executorch_generated
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/export_generated.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 $<TARGET_FILE:interop-fixture> $<TARGET_FILE:xpack-subgraphs> $<TARGET_FILE:xpwc-run>)
add_test(NAME interop_executorch_errors
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/export_errors.sh $<TARGET_FILE:xpack> $<TARGET_FILE:interop-fixture>
                 $<TARGET_FILE:xpack-genmodel>)
add_test(NAME interop_executorch_real
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/export_real.sh $<TARGET_FILE:xpack> ${XPACK_REAL_TESTDATA}
                 $<TARGET_FILE:xpwc-run>)
set_tests_properties(interop_executorch_real PROPERTIES SKIP_RETURN_CODE 77)

# An emulation of ExecuTorch's XNNWeightsCache over the exported file: XNNPACK must pack nothing and every
# output must be bit-identical to a run without a cache. Walks and runs the delegates with xpack_pipeline.h.
add_executable(xpwc-run ${CMAKE_CURRENT_LIST_DIR}/xpwc_run.c)
target_link_libraries(xpwc-run PRIVATE xpack_pack)
set_target_properties(xpwc-run PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
