# Install tests: cmake --install into a temporary prefix, then build projects against it as users would
# (find_package(xpack), pkg-config, xpack_add_cache). They configure and build only small projects.
# The symbol policy of the installed archives: xpack_ for what the public headers declare, an internal
# prefix (ALLOWED_INTERNAL_PREFIXES in symbols.sh) for everything else.
add_test(NAME install_symbols
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/symbols.sh $<TARGET_FILE_DIR:xpack_common>
                 ${PROJECT_SOURCE_DIR}/libpack/include)
find_program(XPACK_NINJA NAMES ninja ninja-build)
if(NOT XPACK_NINJA)
  message(WARNING "ninja not found: the install tests are not defined")
  return()
endif()
foreach(script install_consumers add_cache_example)
  add_test(NAME install_${script}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/${script}.sh ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR}
                   $<TARGET_FILE:xpack-genmodel> ${CMAKE_C_COMPILER} ${XPACK_NINJA})
  set_tests_properties(install_${script} PROPERTIES TIMEOUT 300)
endforeach()
