# Core tests: the cache format, the recording writer and the loader on sample subgraphs built in C.
add_executable(xpack-subgraphs ${CMAKE_CURRENT_LIST_DIR}/xpack_subgraphs.c ${CMAKE_CURRENT_LIST_DIR}/demo_subgraphs.c)
target_link_libraries(xpack-subgraphs PRIVATE xpack_pack xpack_xxhash Threads::Threads)
target_include_directories(xpack-subgraphs PRIVATE ${PROJECT_SOURCE_DIR}/libpack) # loader/xnn_compat.h

foreach(script roundtrip corruption)
  add_test(NAME core_${script}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/${script}.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-subgraphs>)
  set_tests_properties(core_${script} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()
add_executable(flipbyte ${CMAKE_CURRENT_LIST_DIR}/flipbyte.c)
set_target_properties(flipbyte PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
set_target_properties(xpack-subgraphs PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
add_dependencies(xpack-subgraphs flipbyte)

# The complete program shown in docs/INTEGRATION.md.
add_executable(integration_example ${PROJECT_SOURCE_DIR}/docs/examples/integration_example.c)
target_link_libraries(integration_example PRIVATE xpack_pack m)
add_test(NAME core_integration_example
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/integration_example.sh $<TARGET_FILE:integration_example>)

add_executable(provider_quirks ${CMAKE_CURRENT_LIST_DIR}/provider_quirks.c ${PROJECT_SOURCE_DIR}/bench/page_cache.c)
target_include_directories(provider_quirks PRIVATE ${PROJECT_SOURCE_DIR}/bench)
target_link_libraries(provider_quirks PRIVATE xpack_pack)
add_test(NAME core_provider_quirks COMMAND provider_quirks)
# The same where the kernel has no cachestat (XPACK_OPEN_SKIP_COLD then maps the file and asks mincore).
# export --executorch on a cache whose entries share one long identity far more than packing makes them:
# refused before copying one name per entry; a few seeds per weight still export.
add_executable(export_shared_names ${CMAKE_CURRENT_LIST_DIR}/export_shared_names.c)
target_link_libraries(export_shared_names PRIVATE xpack_pack)
add_test(NAME core_export_shared_names COMMAND export_shared_names)

add_executable(without_cachestat ${CMAKE_CURRENT_LIST_DIR}/without_cachestat.c)
add_test(NAME core_provider_quirks_without_cachestat
         COMMAND without_cachestat $<TARGET_FILE:provider_quirks>)
set_tests_properties(core_provider_quirks_without_cachestat PROPERTIES SKIP_RETURN_CODE 77)

# Statuses the headers promise where a review found others: finish_fd of a named writer, a buffered write on a
# full disk, no descriptor left, short files with and without the magic, bytes appended to a cache.
add_executable(status_promises ${CMAKE_CURRENT_LIST_DIR}/status_promises.c)
target_include_directories(status_promises PRIVATE ${PROJECT_SOURCE_DIR}/format)
target_link_libraries(status_promises PRIVATE xpack_pack)
add_test(NAME core_status_promises COMMAND status_promises)

# The NULL rule of xpack_status.h for every public function that takes a handle.
add_executable(null_rule ${CMAKE_CURRENT_LIST_DIR}/null_rule.c)
target_link_libraries(null_rule PRIVATE xpack_pack xpack_et_adapter)
add_test(NAME core_null_rule COMMAND null_rule)

# Packing families: names, probes (deterministic within and across processes), names that are not families.
add_executable(family_probes ${CMAKE_CURRENT_LIST_DIR}/family_probes.c)
target_include_directories(family_probes PRIVATE ${PROJECT_SOURCE_DIR}/libpack)
target_link_libraries(family_probes PRIVATE xpack_loader)
add_test(NAME core_family_probes COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/family_probes.sh $<TARGET_FILE:family_probes>)

# Files changing underneath an open cache: replace by rename, --read, SIGBUS on truncation, size check at open.
add_executable(change_underneath ${CMAKE_CURRENT_LIST_DIR}/change_underneath.c ${CMAKE_CURRENT_LIST_DIR}/demo_subgraphs.c)
target_include_directories(change_underneath PRIVATE ${PROJECT_SOURCE_DIR}/libpack) # loader/xnn_compat.h (demo_subgraphs.c)
target_link_libraries(change_underneath PRIVATE xpack_pack xpack_xxhash)
add_test(NAME core_change_underneath
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/change_underneath.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-subgraphs> $<TARGET_FILE:change_underneath>)

# One change at a time (probe value, build id, family name, entries without family), every checksum re-sealed.
add_executable(xpc_tamper ${CMAKE_CURRENT_LIST_DIR}/xpc_tamper.c)
target_include_directories(xpc_tamper PRIVATE ${PROJECT_SOURCE_DIR}/libpack ${PROJECT_SOURCE_DIR}/format)
target_link_libraries(xpc_tamper PRIVATE xpack_cachefile xpack_xxhash)
set_target_properties(xpc_tamper PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
add_dependencies(xpack-subgraphs xpc_tamper)
# Every rule of FORMAT.md no checksum covers, broken with checksums re-sealed: verify names it, a run is
# refused or computes the outputs without a cache; a transport file's alignments are bounded (issue 16).
add_test(NAME core_format_rules
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/format_rules.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-subgraphs>
                 $<TARGET_FILE:xpc_tamper> $<TARGET_FILE:xpack-genmodel>)
# A region whose recorded size lies, checksums re-sealed: refused because XNNPACK reads another size; never a
# crash, outputs as without a cache (issue 16).
add_test(NAME core_lying_sizes
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/lying_sizes.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpc_tamper>
                 $<TARGET_FILE:xpack-genmodel> ${XPACK_REAL_TESTDATA})
add_test(NAME core_families
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/families.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 $<TARGET_FILE:xpack-subgraphs> $<TARGET_FILE:xpc_tamper>)
# One cache per class of CPU: the one that serves this process most is chosen (xpack_cache_open_best).
add_test(NAME core_choose_cache
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/choose_cache.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 $<TARGET_FILE:xpc_tamper>)
# Why each look-up missed, as `xpack run --cache` tells it (xpack_cache_on_miss).
add_executable(reseed_cache ${CMAKE_CURRENT_LIST_DIR}/reseed_cache.c)
target_link_libraries(reseed_cache PRIVATE xpack_pack)
add_test(NAME core_miss_reasons
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/miss_reasons.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 $<TARGET_FILE:reseed_cache> $<TARGET_FILE:xpc_tamper>)
# Runtimes created again and again over a cache that misses: each missed weight is packed and kept once.
add_test(NAME core_repeat_runtimes
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/repeat_runtimes.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-subgraphs>
                 $<TARGET_FILE:xpc_tamper> $<TARGET_FILE:reseed_cache>)

# A cache inside another file (an APK's asset), opened by descriptor, offset and size.
add_executable(open_fd ${CMAKE_CURRENT_LIST_DIR}/open_fd.c ${PROJECT_SOURCE_DIR}/bench/page_cache.c)
target_include_directories(open_fd PRIVATE ${PROJECT_SOURCE_DIR}/bench)
target_link_libraries(open_fd PRIVATE xpack_pack)
add_test(NAME core_open_fd
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/open_fd.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-subgraphs>
                 $<TARGET_FILE:open_fd> $<TARGET_FILE:xpc_tamper>)

# Another CPU for real: natively packed caches run in qemu-user with a CPU model without AVX.
add_test(NAME core_qemu_families
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/qemu_families.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 ${XPACK_REAL_TESTDATA})
set_tests_properties(core_qemu_families PROPERTIES SKIP_RETURN_CODE 77)

# The key hash against FORMAT.md 5.9, recomputed independently, across libpack's stack-buffer limit.
add_executable(key_hash ${CMAKE_CURRENT_LIST_DIR}/key_hash.c)
target_include_directories(key_hash PRIVATE ${PROJECT_SOURCE_DIR}/libpack ${PROJECT_SOURCE_DIR}/format)
target_link_libraries(key_hash PRIVATE xpack_loader xpack_xxhash)
add_test(NAME core_key_hash COMMAND key_hash)

# The content-hash memo of open programs and .ptd files, also with threads asking at once (issue 17).
add_executable(hash_memo ${CMAKE_CURRENT_LIST_DIR}/hash_memo.c)
target_include_directories(hash_memo PRIVATE ${PROJECT_SOURCE_DIR}/libpack)
target_link_libraries(hash_memo PRIVATE xpack_et xpack_xxhash)
add_test(NAME core_hash_memo COMMAND hash_memo)

# The heap pool's spare scratch blocks: reuse of the smallest that fits, the limit, kept blocks never reused.
add_executable(heap_spares ${CMAKE_CURRENT_LIST_DIR}/heap_spares.c)
target_include_directories(heap_spares PRIVATE ${PROJECT_SOURCE_DIR}/libpack ${PROJECT_SOURCE_DIR}/format)
target_link_libraries(heap_spares PRIVATE xpack_loader)
add_test(NAME core_heap_spares COMMAND heap_spares)
# libpack for a 32-bit target (size_t and off_t of 32 bits, as on armeabi-v7a phones): compiled, not run.
get_target_property(_xpack_xnn_defs xpack::XNNPACK INTERFACE_COMPILE_DEFINITIONS)
string(REGEX REPLACE ".*XPACK_XNNPACK_VERSION=\"([^\"]*)\".*" "\\1" _xpack_xnn_version "${_xpack_xnn_defs}")
list(TRANSFORM XPACK_C_DEFINITIONS PREPEND -D OUTPUT_VARIABLE _xpack_ilp32_definitions)
add_test(NAME core_ilp32_syntax
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ilp32_syntax.sh ${PROJECT_SOURCE_DIR} ${XPACK_XNNPACK_INCLUDE_DIR}
                 "${_xpack_xnn_version}" ${XPACK_C_WARNINGS} ${_xpack_ilp32_definitions})
set_tests_properties(core_ilp32_syntax PROPERTIES SKIP_RETURN_CODE 77)

# Parallel packing's layout: delegates ending in any order, spooled regions mapped, bytes a later delegate
# stored first, delegates never ended; every file compared with the serial one.
add_executable(writer_layout ${CMAKE_CURRENT_LIST_DIR}/writer_layout.c)
target_link_libraries(writer_layout PRIVATE xpack_pack Threads::Threads)
add_test(NAME core_writer_layout COMMAND writer_layout)

# Blockwise fp32 scales to bf16 as ExecuTorch converts them, at the values where RNE would differ.
add_executable(bf16_scales ${CMAKE_CURRENT_LIST_DIR}/bf16_scales.c)
target_include_directories(bf16_scales PRIVATE ${PROJECT_SOURCE_DIR}/libpack)
target_link_libraries(bf16_scales PRIVATE xpack_pack)
add_test(NAME core_bf16_scales COMMAND bf16_scales)

# libpack's layering: every include of every libpack file against the folder table of libpack/README.md.
add_test(NAME core_include_rules COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/include_rules.py ${PROJECT_SOURCE_DIR})
# libpack's folders, its libraries, README.md's Layout and docs/INTEGRATION.md's library table agree.
add_test(NAME core_layout_docs COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/layout_docs.py ${PROJECT_SOURCE_DIR})

# Graph changes that keep the flatbuffer well-formed but once crashed pack or run (issue 16).
add_executable(hostile_graphs ${CMAKE_CURRENT_LIST_DIR}/hostile_graphs.c)
target_link_libraries(hostile_graphs PRIVATE xpack_pack)
add_test(NAME core_hostile_graphs
         COMMAND bash -c "d=$(mktemp -d) && trap 'rm -rf $d' EXIT && $<TARGET_FILE:xpack-genmodel> conv -o $d/conv.pte && $<TARGET_FILE:xpack-genmodel> deconv -o $d/deconv.pte && $<TARGET_FILE:xpack-genmodel> fp16 -o $d/fc.pte && $<TARGET_FILE:xpack-genmodel> qd8-qc8w -o $d/dq.pte && $<TARGET_FILE:xpack-genmodel> bmm -o $d/bmm.pte && $<TARGET_FILE:xpack-genmodel> llm-q4 --size 256K -o $d/q4.pte && $<TARGET_FILE:hostile_graphs> $d/conv.pte $d/deconv.pte $d/fc.pte $d/dq.pte $d/bmm.pte $d/q4.pte")

# xpack_execute_runtime run again with one result struct sets its outputs, not appends to them.
add_executable(execute_runtime ${CMAKE_CURRENT_LIST_DIR}/execute_runtime.c)
target_link_libraries(execute_runtime PRIVATE xpack_pack)
add_test(NAME core_execute_runtime
         COMMAND bash -c "d=$(mktemp -d) && trap 'rm -rf $d' EXIT && $<TARGET_FILE:xpack-genmodel> fp16 -o $d/fc.pte && $<TARGET_FILE:execute_runtime> $d/fc.pte")

include(${CMAKE_CURRENT_LIST_DIR}/shape_rules.cmake)
xpack_add_shape_rules_test(core_shape_rules)

# The shared check set's callback contract: verify collects every planted fault, a stopping callback and
# compress get the first only.
add_executable(cache_checks ${CMAKE_CURRENT_LIST_DIR}/cache_checks.c)
target_include_directories(cache_checks PRIVATE ${PROJECT_SOURCE_DIR}/libpack ${PROJECT_SOURCE_DIR}/format)
target_link_libraries(cache_checks PRIVATE xpack_pack xpack_xxhash)
add_test(NAME core_cache_checks COMMAND cache_checks)
# XPACK_OPEN_SKIP_SMALL: a cache file under 128 KiB skipped unread, a larger one served; the boundary; pack's
# note and bench's default agree with it (issue 17).
add_test(NAME core_skip_small
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/skip_small.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
# XPACK_OPEN_SKIP_COLD: a cache file under 1 MiB out of the page cache skipped unread and warmed for the next
# run, a warm one and a larger cold one served; the boundary; bench's cold variants (issue 17).
add_executable(page_cache ${CMAKE_CURRENT_LIST_DIR}/page_cache_tool.c ${PROJECT_SOURCE_DIR}/bench/page_cache.c)
target_include_directories(page_cache PRIVATE ${PROJECT_SOURCE_DIR}/bench)
add_test(NAME core_skip_cold
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/skip_cold.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 $<TARGET_FILE:page_cache>)
set_tests_properties(core_skip_cold PROPERTIES SKIP_RETURN_CODE 77)
# A program keyed by module path, cold: its weights, which the identities hash, come in large reads (issue 17).
add_test(NAME core_hashed_cold
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/hashed_cold.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 $<TARGET_FILE:page_cache>)
set_tests_properties(core_hashed_cold PROPERTIES SKIP_RETURN_CODE 77)
# Whether any source is read on demand, which decides whether the replay reads ahead (issue 17).
add_executable(reads_on_demand ${CMAKE_CURRENT_LIST_DIR}/reads_on_demand.c)
target_link_libraries(reads_on_demand PRIVATE xpack_et)
add_test(NAME core_reads_on_demand
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/reads_on_demand.sh $<TARGET_FILE:reads_on_demand>
                 $<TARGET_FILE:xpack-genmodel>)
# The CPU description that `pack` records as INFO "cpu", from the /proc/cpuinfo of other machines.
add_executable(cpu_description ${CMAKE_CURRENT_LIST_DIR}/cpu_description.c)
target_include_directories(cpu_description PRIVATE ${PROJECT_SOURCE_DIR}/libpack)
target_link_libraries(cpu_description PRIVATE xpack_inspect)
add_test(NAME core_cpu_description COMMAND cpu_description)
# xpack_cache_prefetch on cache files dropped from the page cache.
add_executable(prefetch ${CMAKE_CURRENT_LIST_DIR}/prefetch.c ${PROJECT_SOURCE_DIR}/bench/page_cache.c)
target_include_directories(prefetch PRIVATE ${PROJECT_SOURCE_DIR}/bench)
target_link_libraries(prefetch PRIVATE xpack_pack)
add_test(NAME core_prefetch COMMAND prefetch)
set_tests_properties(core_prefetch PROPERTIES SKIP_RETURN_CODE 77)

# Named temporary files of writers racing in one folder: no writer's clean-up of leftovers removes a file
# another writer holds.
add_executable(temp_race ${CMAKE_CURRENT_LIST_DIR}/temp_race.c)
target_include_directories(temp_race PRIVATE ${PROJECT_SOURCE_DIR}/libpack)
target_link_libraries(temp_race PRIVATE xpack_common Threads::Threads)
add_test(NAME core_temp_race COMMAND temp_race)
# xpack_cache_open_limits: the skip flags compare with the caller's limits (the ExecuTorch adapter's, a device's).
add_executable(open_limits ${CMAKE_CURRENT_LIST_DIR}/open_limits.c ${PROJECT_SOURCE_DIR}/bench/page_cache.c)
target_include_directories(open_limits PRIVATE ${PROJECT_SOURCE_DIR}/bench)
target_link_libraries(open_limits PRIVATE xpack_pack)
add_test(NAME core_open_limits COMMAND open_limits)
set_tests_properties(core_open_limits PROPERTIES SKIP_RETURN_CODE 77)

# Sound cache files shaped to ask a reader for work out of proportion to their size (issue 16).
add_executable(xpc_craft ${CMAKE_CURRENT_LIST_DIR}/xpc_craft.c)
target_include_directories(xpc_craft PRIVATE ${PROJECT_SOURCE_DIR}/libpack ${PROJECT_SOURCE_DIR}/format)
target_link_libraries(xpc_craft PRIVATE xpack_pack xpack_xxhash xpack_zstd)
set_target_properties(xpc_craft PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# Entries sharing one long identity: refused by every tool that reads a whole cache, in milliseconds and
# under a memory limit (issue 16).
# Names from files cannot start lines of their own in a text report.
add_test(NAME core_report_names
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/report_names.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpc_tamper>
                 $<TARGET_FILE:xpack-genmodel>)
add_test(NAME core_identity_sharing
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/identity_sharing.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpc_craft>
                 $<TARGET_FILE:xpc_tamper> $<TARGET_FILE:xpack-genmodel>)
set_tests_properties(core_identity_sharing PROPERTIES TIMEOUT 120)
# Many region records over one place: verify reads the place once and reports the overlaps, in well under a
# second (it once read a 1 GiB frame's worth per record).
add_test(NAME core_overlapping_regions
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/overlapping_regions.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpc_craft>)
set_tests_properties(core_overlapping_regions PROPERTIES TIMEOUT 120)
add_executable(run_lookups ${CMAKE_CURRENT_LIST_DIR}/run_lookups.c)
target_link_libraries(run_lookups PRIVATE xpack_loader)
set_target_properties(run_lookups PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# 1,000,000 entries of one key hash: each look-up is one binary search, not a scan of the run (3 ms each once).
add_test(NAME core_same_hash_lookups
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/same_hash_lookups.sh $<TARGET_FILE:run_lookups> $<TARGET_FILE:xpc_craft>)
set_tests_properties(core_same_hash_lookups PROPERTIES TIMEOUT 120)
# A report that outgrows memory is refused whole, never printed cut short.
add_test(NAME core_report_memory
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/report_memory.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpc_craft>)
set_tests_properties(core_report_memory PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)

# The adapter and the loader from several threads: another cache's probes while one is attached, concurrent
# attaches, concurrent warm-ups of a cache skipped as cold.
add_executable(adapter_threads ${CMAKE_CURRENT_LIST_DIR}/adapter_threads.c ${PROJECT_SOURCE_DIR}/bench/page_cache.c)
target_include_directories(adapter_threads PRIVATE ${PROJECT_SOURCE_DIR}/bench)
target_link_libraries(adapter_threads PRIVATE xpack_pack xpack_et_adapter xpack_xxhash Threads::Threads
                      -Wl,--wrap=close)
add_test(NAME core_adapter_threads
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/adapter_threads.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 $<TARGET_FILE:adapter_threads>)
set_tests_properties(core_adapter_threads PROPERTIES SKIP_RETURN_CODE 77)

# A pack in a process with a cache attached to the ExecuTorch adapter: its runtimes pass the wrapper untouched.
add_executable(adapter_pack ${CMAKE_CURRENT_LIST_DIR}/adapter_pack.c)
target_link_libraries(adapter_pack PRIVATE xpack_pack xpack_et_adapter)
add_test(NAME core_adapter_pack
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/adapter_pack.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 $<TARGET_FILE:adapter_pack>)

# Detaching the adapter while runtimes created with its cache still exist: the cache stays open until the last goes.
add_executable(adapter_detach ${CMAKE_CURRENT_LIST_DIR}/adapter_detach.c)
target_link_libraries(adapter_detach PRIVATE xpack_pack xpack_et_adapter)
target_include_directories(adapter_detach PRIVATE ${PROJECT_SOURCE_DIR}/libpack) # et_adapter/adapter_runtimes.h
# The same linked as an app whose link line wraps xnn_create_runtime_v4 alone: the adapter's archive, not its target.
add_executable(adapter_detach_untracked ${CMAKE_CURRENT_LIST_DIR}/adapter_detach.c)
target_compile_definitions(adapter_detach_untracked PRIVATE ADAPTER_DETACH_UNTRACKED)
target_include_directories(adapter_detach_untracked PRIVATE $<TARGET_PROPERTY:xpack_et_adapter,INTERFACE_INCLUDE_DIRECTORIES>
                           ${PROJECT_SOURCE_DIR}/libpack)
target_link_libraries(adapter_detach_untracked PRIVATE $<TARGET_FILE:xpack_et_adapter> xpack_pack
                      "-Wl,--wrap=xnn_create_runtime_v4" "-Wl,--undefined=__wrap_xnn_create_runtime_v4")
add_dependencies(adapter_detach_untracked xpack_et_adapter)
# ...and as an app with its own stand-in for xnn_delete_runtime, through the adapter's target (both wraps).
add_executable(adapter_detach_own_delete ${CMAKE_CURRENT_LIST_DIR}/adapter_detach.c
               ${CMAKE_CURRENT_LIST_DIR}/adapter_own_delete.c)
target_compile_definitions(adapter_detach_own_delete PRIVATE ADAPTER_DETACH_UNTRACKED)
target_link_libraries(adapter_detach_own_delete PRIVATE xpack_pack xpack_et_adapter)
target_include_directories(adapter_detach_own_delete PRIVATE ${PROJECT_SOURCE_DIR}/libpack)
add_test(NAME core_adapter_detach
         COMMAND bash -c "d=$(mktemp -d) && trap 'rm -rf $d' EXIT && $<TARGET_FILE:xpack-genmodel> llm --size 4M -o $d/llm.pte && $<TARGET_FILE:xpack> pack $d/llm.pte -o $d/llm.xpc 2>/dev/null && $<TARGET_FILE:adapter_detach> $d/llm.pte $d/llm.xpc && $<TARGET_FILE:adapter_detach_untracked> $d/llm.pte $d/llm.xpc && $<TARGET_FILE:adapter_detach_own_delete> $d/llm.pte $d/llm.xpc")

# Every allocation of pack, inspect, dump and verify made to fail in turn (fail_alloc.so, preloaded).
add_library(fail_alloc MODULE ${CMAKE_CURRENT_LIST_DIR}/fail_alloc.c)
set_target_properties(fail_alloc PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
target_link_libraries(fail_alloc PRIVATE ${CMAKE_DL_LIBS})
add_test(NAME core_out_of_memory
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/out_of_memory.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 $<TARGET_FILE:fail_alloc>)
