# The command line (docs/CLI.md): help, usage errors, --json, stdout/stderr, -q/-v, --version, progress line.
add_test(NAME cli_options COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
add_test(NAME cli_progress
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/progress.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
# change_on_map: a test-only LD_PRELOAD shim that truncates an input, or renames another file over it, the
# moment the command first maps it; or truncates an input, or makes a FIFO at the output, at its first write.
add_library(xpack-test-change-on-map MODULE ${CMAKE_CURRENT_LIST_DIR}/change_on_map.c)
target_link_libraries(xpack-test-change-on-map PRIVATE ${CMAKE_DL_LIBS})
add_test(NAME cli_truncated_input
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/truncated_input.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 $<TARGET_FILE:xpack-test-change-on-map>)
# A cache replaced by another file while verify or export reads it: export checks the bytes it writes from;
# verify and export's report refuse to describe two files as one (exit 4).
add_test(NAME cli_replaced_input
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/replaced_input.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 $<TARGET_FILE:xpack-test-change-on-map>)
# Programs whose vtables declare fewer inline bytes than their fields need, as ExecuTorch's training export
# writes them (xpack-genmodel --short-vtables, issue 16): every command accepts them and packs, verifies and
# runs them as the same program written normally.
add_test(NAME cli_short_vtables
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/short_vtables.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
# tools/setup-deps.sh: one run at a time per dependency cache (a second waits for the first).
add_test(NAME cli_setup_deps_lock
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/setup_deps_lock.sh ${PROJECT_SOURCE_DIR} ${XNNPACK_PREFIX})
set_tests_properties(cli_setup_deps_lock PROPERTIES SKIP_RETURN_CODE 77)
# A FIFO that appears at the output while the command works is refused at the rename, not replaced.
add_test(NAME cli_changed_output
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/changed_output.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 $<TARGET_FILE:xpack-test-change-on-map>)
# A machine short of descriptors, or a umask without the owner's read bit, is not a fault of the cache
# (scarce_machine.sh).
add_test(NAME cli_scarce_machine
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/scarce_machine.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
set_tests_properties(cli_scarce_machine PROPERTIES SKIP_RETURN_CODE 77)
