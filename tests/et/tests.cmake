# Tests of the ExecuTorch readers (libpack/et). Real files are read in place from XPACK_REAL_TESTDATA;
# tests that need them exit 77 (skipped) with a message when the folder is absent.
set(_et_dir ${CMAKE_CURRENT_LIST_DIR})

add_executable(et_dump ${_et_dir}/et_dump.c)
target_link_libraries(et_dump PRIVATE xpack_et)

add_executable(et_real_test ${_et_dir}/et_real_test.c)
target_link_libraries(et_real_test PRIVATE xpack_et)
add_test(NAME et_real_files COMMAND et_real_test ${XPACK_REAL_TESTDATA})
set_tests_properties(et_real_files PROPERTIES SKIP_RETURN_CODE 77)

add_executable(et_robust_test ${_et_dir}/et_robust_test.c)
target_link_libraries(et_robust_test PRIVATE xpack_et)
add_test(NAME et_damaged_files COMMAND et_robust_test ${XPACK_REAL_TESTDATA} 3000)
set_tests_properties(et_damaged_files PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
# In a sanitizer build any report fails the test instead of scrolling by.
set_tests_properties(et_real_files et_damaged_files PROPERTIES
  ENVIRONMENT "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1;ASAN_OPTIONS=detect_leaks=1")

# White-box: includes libpack/et/flatbuf.h directly.
add_executable(et_unit_test ${_et_dir}/et_unit_test.c)
target_include_directories(et_unit_test PRIVATE ${PROJECT_SOURCE_DIR}/libpack)
target_link_libraries(et_unit_test PRIVATE xpack_et)
add_test(NAME et_unit COMMAND et_unit_test)

# `xpack inspect` end to end on every real file, usage errors, and generated .pte/.ptd pairs (when the
# generator is built). Needs python3 for JSON (found by tests/CMakeLists.txt); skips (77) without the real
# folder.
if(Python3_Interpreter_FOUND AND TARGET xpack)
  add_test(NAME et_inspect
           COMMAND ${Python3_EXECUTABLE} ${_et_dir}/inspect_test.py $<TARGET_FILE:xpack> ${XPACK_REAL_TESTDATA}
                   "$<$<TARGET_EXISTS:xpack-genmodel>:$<TARGET_FILE:xpack-genmodel>>")
  set_tests_properties(et_inspect PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
  # Crafted files whose entries share one table, vector or string: refused (exit 3) within 1 GiB and 60 s
  # each, where the readers once built one record per entry (gigabytes from kilobytes).
  add_test(NAME et_shared_objects
           COMMAND ${Python3_EXECUTABLE} ${_et_dir}/shared_objects_test.py $<TARGET_FILE:xpack>)
  set_tests_properties(et_shared_objects PROPERTIES TIMEOUT 300)
endif()

# What a quantized weight's identity holds besides its bytes (xpack_et_packing_suffix), parameter by parameter.
add_executable(packing_suffix_test ${_et_dir}/packing_suffix_test.c)
target_include_directories(packing_suffix_test PRIVATE ${PROJECT_SOURCE_DIR}/libpack) # re-indexes a changed graph
target_link_libraries(packing_suffix_test PRIVATE xpack_et)
add_test(NAME et_packing_suffix
         COMMAND bash -c "d=$(mktemp -d) && trap 'rm -rf $d' EXIT && $<TARGET_FILE:xpack-genmodel> qd8-qc8w -o $d/q.pte > /dev/null && $<TARGET_FILE:packing_suffix_test> $d/q.pte")
