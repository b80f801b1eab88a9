# Smoke tests of the benchmark tools (no timing is asserted): `xpack bench` on a tiny generated model,
# xpack-bench-open on small caches, xpack-bench-skip on a small cache, the scripts on the smallest sizes.
add_test(NAME bench_smoke COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/smoke_test.sh $<TARGET_FILE:xpack>
         $<TARGET_FILE:xpack-genmodel> $<TARGET_FILE:xpack-bench-open> $<TARGET_FILE:xpack-bench-skip>)
set_tests_properties(bench_smoke PROPERTIES SKIP_RETURN_CODE 77)
