# The command line (docs/CLI.md): help, usage errors, --json, stdout/stderr, -q/-v, --version, progress line.
add_test(NAME cli_options COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
add_test(NAME cli_progress
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/progress.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
add_test(NAME cli_truncated_input
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/truncated_input.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
