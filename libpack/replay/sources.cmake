# Replay of XNNPACK delegates into XNNPACK subgraphs (part of xpack_pack).
target_sources(xpack_pack PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/replay.c
  ${CMAKE_CURRENT_LIST_DIR}/replay_values.c
  ${CMAKE_CURRENT_LIST_DIR}/replay_nodes.c
  ${CMAKE_CURRENT_LIST_DIR}/replay_families.c)
target_include_directories(xpack_pack PRIVATE ${CMAKE_CURRENT_LIST_DIR})
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/replay_nodes.c PROPERTIES COMPILE_OPTIONS "-Wno-deprecated-declarations")
