# Tests of the fixture generator (xpack-genmodel). Included from tests/CMakeLists.txt.
# They need python3 (found by tests/CMakeLists.txt) and flatc (decoding with format/*.fbs); tests comparing
# with real exports skip (return code 77) when ${XPACK_REAL_TESTDATA} is absent.
if(NOT TARGET xpack-genmodel)
  add_subdirectory(${PROJECT_SOURCE_DIR}/testdata/gen ${CMAKE_BINARY_DIR}/testdata-gen)
endif()

find_program(XPACK_FLATC flatc)
find_program(XPACK_SHA256SUM sha256sum)
if(NOT Python3_Interpreter_FOUND OR NOT XPACK_FLATC OR NOT XPACK_SHA256SUM)
  message(STATUS "xpack: generator tests disabled (need python3, flatc and sha256sum)")
  return()
endif()

if(NOT DEFINED XPACK_REAL_TESTDATA)
  set(XPACK_REAL_TESTDATA "${PROJECT_SOURCE_DIR}/../shared/testdata/real")
endif()

add_executable(xpack-gen-sha256 ${CMAKE_CURRENT_LIST_DIR}/sha256_tool.c ${PROJECT_SOURCE_DIR}/testdata/gen/sha256.c)
target_include_directories(xpack-gen-sha256 PRIVATE ${PROJECT_SOURCE_DIR}/testdata/gen)

set(_gen_driver ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/gen_tests.py $<TARGET_FILE:xpack-genmodel>)
set(_gen_env "XPACK_SCHEMA_DIR=${PROJECT_SOURCE_DIR}/format")

function(xpack_gen_test name)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 ENVIRONMENT "${_gen_env}" LABELS "gen")
endfunction()

xpack_gen_test(gen_sha256_matches_sha256sum
  ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/gen_tests.py $<TARGET_FILE:xpack-gen-sha256> sha256)
xpack_gen_test(gen_cli_usage ${_gen_driver} usage)

foreach(kind llm llm-q4 qd8-qc8w fp16 bf16 deconv bmm ptd conv)
  xpack_gen_test(gen_wire_${kind} ${_gen_driver} wire ${kind})
  xpack_gen_test(gen_determinism_${kind} ${_gen_driver} determinism ${kind})
endforeach()

# Structure against the closest real export of the same family.
set(_real ${XPACK_REAL_TESTDATA})
xpack_gen_test(gen_real_llm ${_gen_driver} real llm ${_real}/stress_mlp.pte)
xpack_gen_test(gen_real_llm_q4 ${_gen_driver} real llm-q4 ${_real}/person_detect_int8.pte)
xpack_gen_test(gen_real_qd8_qc8w ${_gen_driver} real qd8-qc8w ${_real}/person_detect_int8.pte)
xpack_gen_test(gen_real_fp16 ${_gen_driver} real fp16 ${_real}/linear129.pte)
xpack_gen_test(gen_real_deconv ${_gen_driver} real deconv ${_real}/conv.pte)
xpack_gen_test(gen_real_bmm ${_gen_driver} real bmm ${_real}/linear129.pte)
xpack_gen_test(gen_real_conv ${_gen_driver} real conv ${_real}/conv.pte)
xpack_gen_test(gen_real_ptd ${_gen_driver} real ptd ${_real}/linear129.pte ${_real}/orphan_xnnpack_weights.ptd)

# --short-vtables (ExecuTorch's training export's vtables): same contents, inline sizes as the export
# declares them, in every flatbuffer of every kind.
foreach(kind llm llm-q4 qd8-qc8w fp16 bf16 deconv bmm ptd conv)
  xpack_gen_test(gen_short_vtables_${kind} ${_gen_driver} short-vtables ${kind})
endforeach()

xpack_gen_test(gen_share_llm ${_gen_driver} share llm)
xpack_gen_test(gen_share_llm_q4 ${_gen_driver} share llm-q4)
xpack_gen_test(gen_alias_identical_blobs ${_gen_driver} alias)
# Streams 512 MiB of weights; memory must stay bounded (the generator never holds a whole tensor set).
xpack_gen_test(gen_large_bounded_memory ${_gen_driver} large 512M 48)
set_tests_properties(gen_large_bounded_memory PROPERTIES LABELS "gen;large" TIMEOUT 300)

# With the readers (xpack_pack) and XNNPACK available, every kind must define and run in XNNPACK.
if(TARGET xpack_pack)
  add_executable(xpack-gen-xnnpack-run ${CMAKE_CURRENT_LIST_DIR}/xnnpack_run_check.c)
  target_link_libraries(xpack-gen-xnnpack-run PRIVATE xpack_pack m)
  # ExecuTorch's XNNCompiler still uses these define calls; so does this check.
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/xnnpack_run_check.c PROPERTIES COMPILE_OPTIONS
    "-Wno-deprecated-declarations")
  # Not bf16: XNNPACK runs it only where it has a bf16 fully-connected kernel or falls back to fp32, and only
  # through ExecuTorch main's rewrite of the bf16 output; model_bf16 runs it where it can, saying where not.
  foreach(kind llm llm-q4 qd8-qc8w fp16 deconv bmm ptd conv)
    xpack_gen_test(gen_xnnpack_runs_${kind} ${_gen_driver} xnnrun ${kind} $<TARGET_FILE:xpack-gen-xnnpack-run>)
  endforeach()
endif()

# A run leaves nothing in the temporary folder: one wire check with TMPDIR a folder of its own, which
# must be empty afterwards (each run used to leave its xpack-gen-* folders in /tmp).
add_test(NAME gen_leaves_no_temporary_files
         COMMAND bash -c "d=$(mktemp -d) && TMPDIR=$d \"$0\" \"$1\" \"$2\" wire ptd && left=$(ls -A \"$d\") && rmdir \"$d\" || { echo \"left in TMPDIR: $left\"; exit 1; }"
                 ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/gen_tests.py $<TARGET_FILE:xpack-genmodel>)
set_tests_properties(gen_leaves_no_temporary_files PROPERTIES ENVIRONMENT "${_gen_env}" LABELS "gen")
