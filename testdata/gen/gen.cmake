# Defines the xpack-genmodel executable (ExecuTorch .pte/.ptd fixture generator). Included by the
# top-level build or by testdata/gen/CMakeLists.txt when built on its own. Depends on libc only.
if(NOT TARGET xpack-genmodel)
  set(_xpack_gen_dir ${CMAKE_CURRENT_LIST_DIR})
  add_executable(xpack-genmodel
    ${_xpack_gen_dir}/main.c
    ${_xpack_gen_dir}/kinds.c
    ${_xpack_gen_dir}/kind_llm.c
    ${_xpack_gen_dir}/kind_cnn.c
    ${_xpack_gen_dir}/kind_misc.c
    ${_xpack_gen_dir}/kind_shapes.c
    ${_xpack_gen_dir}/pte_writer.c
    ${_xpack_gen_dir}/xnn_graph.c
    ${_xpack_gen_dir}/weights.c
    ${_xpack_gen_dir}/fb_builder.c
    ${_xpack_gen_dir}/sha256.c
    ${_xpack_gen_dir}/out_file.c)
  target_include_directories(xpack-genmodel PRIVATE ${_xpack_gen_dir} ${_xpack_gen_dir}/../../libpack)
  set_target_properties(xpack-genmodel PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  target_compile_definitions(xpack-genmodel PRIVATE _POSIX_C_SOURCE=200809L _FILE_OFFSET_BITS=64)
  if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(xpack-genmodel PRIVATE -Wall -Wextra -Wshadow -Wno-unused-parameter)
  endif()
  find_library(_xpack_gen_libm m)
  if(_xpack_gen_libm)
    target_link_libraries(xpack-genmodel PRIVATE ${_xpack_gen_libm})
  endif()
endif()
