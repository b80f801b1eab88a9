# libFuzzer targets for the .pte/.ptd reader, the XNNGraph reader, the cache view, inflate, zip archives and,
# linked with the real XNNPACK from XNNPACK_PREFIX, the replay and run paths (fuzz_replay) and the loader as an
# app drives it (fuzz_loader).
# The main build may use gcc, so run_fuzzers.sh configures its own clang build of just the needed
# sources (tests/fuzz/CMakeLists.txt) under ${CMAKE_BINARY_DIR}/fuzz, seeds it from real and generated
# files, and runs each fuzzer for XPACK_FUZZ_SECONDS (default 60, as issue #4 asks). Skips (77) without clang.
# Included from tests/CMakeLists.txt. Long runs: docs/FUZZING.md.
set(_fuzz_dir ${CMAKE_CURRENT_LIST_DIR})
add_test(NAME fuzz_all
         COMMAND bash ${_fuzz_dir}/run_fuzzers.sh
                 --work ${CMAKE_BINARY_DIR}/fuzz
                 --real ${XPACK_REAL_TESTDATA}
                 --xpack "$<$<TARGET_EXISTS:xpack>:$<TARGET_FILE:xpack>>"
                 --subgraphs "$<$<TARGET_EXISTS:xpack-subgraphs>:$<TARGET_FILE:xpack-subgraphs>>"
                 --et-dump "$<$<TARGET_EXISTS:et_dump>:$<TARGET_FILE:et_dump>>"
                 --genmodel "$<$<TARGET_EXISTS:xpack-genmodel>:$<TARGET_FILE:xpack-genmodel>>"
                 --xnnpack "${XNNPACK_PREFIX}")
set_tests_properties(fuzz_all PROPERTIES TIMEOUT 1200 SKIP_RETURN_CODE 77)
# The fuzzers' checksum repair leaves a sound file unchanged (else the fuzzers stop at a checksum it gets wrong).
add_executable(repair_noop ${_fuzz_dir}/repair_noop.c ${_fuzz_dir}/cache_repair.c)
target_include_directories(repair_noop PRIVATE ${PROJECT_SOURCE_DIR}/libpack ${PROJECT_SOURCE_DIR}/format)
target_link_libraries(repair_noop PRIVATE xpack_cachefile xpack_xxhash)
set_target_properties(repair_noop PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
add_test(NAME fuzz_repair_noop
         COMMAND bash ${_fuzz_dir}/repair_noop.sh $<TARGET_FILE:repair_noop> $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
