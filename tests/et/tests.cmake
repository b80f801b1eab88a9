# Tests of the ExecuTorch readers (libpack/et). Real files are read in place from XPACK_REAL_TESTDATA;
# tests that need them exit 77 (skipped) with a message when the folder is absent.
set(_et_dir ${CMAKE_CURRENT_LIST_DIR})

add_executable(et_dump ${_et_dir}/et_dump.c)
target_link_libraries(et_dump PRIVATE xpack_et)
