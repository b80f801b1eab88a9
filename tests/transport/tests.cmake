# The transport form (docs/FORMAT.md section 9): pack --zstd, inflate, verify and dump of zstd frames.
add_executable(inflate_flip ${CMAKE_CURRENT_LIST_DIR}/inflate_flip.c)
target_link_libraries(inflate_flip PRIVATE xpack_inflate) # the install-time library alone, no packer
add_executable(transport_api ${CMAKE_CURRENT_LIST_DIR}/transport_api.c)
target_link_libraries(transport_api PRIVATE xpack_pack)
set_target_properties(inflate_flip transport_api PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

add_test(NAME transport_generated
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/generated.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 $<TARGET_FILE:xpack-subgraphs> $<TARGET_FILE:transport_api>)
add_test(NAME transport_corruption
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/corruption.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 $<TARGET_FILE:inflate_flip>)
add_test(NAME transport_real_files
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/real_files.sh $<TARGET_FILE:xpack> ${XPACK_REAL_TESTDATA})
set_tests_properties(transport_real_files PROPERTIES SKIP_RETURN_CODE 77)
# inflate_flip links xpack_inflate only: no XNNPACK, loader, writer or zstd compressor may end up in it.
add_test(NAME transport_inflate_standalone
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/standalone.sh $<TARGET_FILE:inflate_flip>)
# The 8 MiB window of a region's frame holds for frames of any content size (frame_window.c).
add_executable(frame_window ${CMAKE_CURRENT_LIST_DIR}/frame_window.c)
target_include_directories(frame_window PRIVATE ${PROJECT_SOURCE_DIR}/libpack)
target_link_libraries(frame_window PRIVATE xpack_inflate xpack_xxhash)
set_target_properties(frame_window PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
add_test(NAME transport_frame_window COMMAND frame_window)
# inflate checks its output's file system has room before writing (small_disk.so makes it report 64 KiB free).
add_library(small_disk MODULE ${CMAKE_CURRENT_LIST_DIR}/small_disk.c)
set_target_properties(small_disk PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
add_test(NAME transport_no_room
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/no_room.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 $<TARGET_FILE:small_disk>)
# Nearly constant weights past 64 MiB: pack --zstd keeps to the expansion limit readers enforce (FORMAT.md 9.2).
add_test(NAME transport_constant_weights
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/constant_weights.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
