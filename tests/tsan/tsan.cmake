# tsan_loader: the loader's thread-safety promises under ThreadSanitizer (tests/tsan/run_tsan.sh configures its own
# clang build of the loader under BUILD/tsan, linked with the main build's XNNPACK). Skips (77) without clang or
# a working ThreadSanitizer. Included from tests/CMakeLists.txt.
add_test(NAME tsan_loader
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run_tsan.sh --work ${CMAKE_BINARY_DIR}/tsan --xnnpack "${XNNPACK_PREFIX}")
set_tests_properties(tsan_loader PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77)
