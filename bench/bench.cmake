# Benchmarks. `xpack bench` (tools/cmd_bench*.c) measures models; xpack-bench-open measures xpack_cache_open
# against entry count and weight bytes. The scripts beside this file drive both (see docs/BENCHMARKS.md).
add_executable(xpack-bench-open ${CMAKE_CURRENT_LIST_DIR}/open_scaling.c ${CMAKE_CURRENT_LIST_DIR}/page_cache.c
                                ${CMAKE_CURRENT_LIST_DIR}/timing.c)
target_link_libraries(xpack-bench-open PRIVATE xpack_pack)
# Count every allocation libpack makes during an open.
target_link_options(xpack-bench-open PRIVATE
  "LINKER:--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign,--wrap=aligned_alloc")
# What skipping a small cache costs the first time in a fresh process, against a stat (docs/BENCHMARKS.md).
add_executable(xpack-bench-skip ${CMAKE_CURRENT_LIST_DIR}/skip_cost.c ${CMAKE_CURRENT_LIST_DIR}/timing.c)
target_link_libraries(xpack-bench-skip PRIVATE xpack_loader)
