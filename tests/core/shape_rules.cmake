# The shapes the replay predicts for computed values (its deconvolution check rests on them) against XNNPACK's
# own reshape, on random one-node graphs of every node kind it follows: tests/core (core_shape_rules) and, on
# the target's CPU under qemu, tests/cross (cross_shape_rules).
function(xpack_add_shape_rules_test test_name)
  set(_source ${PROJECT_SOURCE_DIR}/tests/core/shape_rules.c)
  add_executable(shape_rules ${_source})
  target_include_directories(shape_rules PRIVATE ${PROJECT_SOURCE_DIR}/libpack)
  target_link_libraries(shape_rules PRIVATE xpack_pack)
  set_source_files_properties(${_source} PROPERTIES COMPILE_OPTIONS "-Wno-deprecated-declarations")
  add_test(NAME ${test_name} COMMAND shape_rules)
endfunction()
