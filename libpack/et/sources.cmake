# ExecuTorch readers: .pte, .ptd and XNNPACK delegate blobs (see include/xpack_executorch.h).
# A separate static library so the readers can be fuzzed and tested without the rest of xpack_pack.
add_library(xpack_et STATIC
  ${CMAKE_CURRENT_LIST_DIR}/flatbuf.c
  ${CMAKE_CURRENT_LIST_DIR}/et_map.c
  ${CMAKE_CURRENT_LIST_DIR}/keys.c
  ${CMAKE_CURRENT_LIST_DIR}/arena.c
  ${CMAKE_CURRENT_LIST_DIR}/pte.c
  ${CMAKE_CURRENT_LIST_DIR}/ptd.c
  ${CMAKE_CURRENT_LIST_DIR}/xnn_types.c
  ${CMAKE_CURRENT_LIST_DIR}/xnn_graph.c
  ${CMAKE_CURRENT_LIST_DIR}/constants.c
  ${CMAKE_CURRENT_LIST_DIR}/summary.c)
target_include_directories(xpack_et
  PUBLIC ${CMAKE_CURRENT_LIST_DIR}/../include
  PRIVATE ${CMAKE_CURRENT_LIST_DIR} ${CMAKE_CURRENT_LIST_DIR}/../src)
# error.c (xpack_fail) lives in xpack_loader.
target_link_libraries(xpack_et PUBLIC xpack_loader PRIVATE xpack_xxhash m)
target_link_libraries(xpack_pack PUBLIC xpack_et)
