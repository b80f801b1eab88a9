# tsan_loader: the loader's and the ExecuTorch adapter's thread-safety promises under ThreadSanitizer
# (tests/tsan/run_tsan.sh configures its own clang build of libpack under BUILD/tsan, linked with the main build's
# XNNPACK; the main build's xpack and xpack-genmodel make the adapter's programs and caches). Skips (77) without
# clang or a working ThreadSanitizer. Included from tests/CMakeLists.txt.
add_test(NAME tsan_loader
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run_tsan.sh --work ${CMAKE_BINARY_DIR}/tsan --xnnpack "${XNNPACK_PREFIX}"
                 --xpack "$<$<TARGET_EXISTS:xpack>:$<TARGET_FILE:xpack>>"
                 --genmodel "$<$<TARGET_EXISTS:xpack-genmodel>:$<TARGET_FILE:xpack-genmodel>>")
set_tests_properties(tsan_loader PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77)
