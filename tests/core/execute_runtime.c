/* xpack_execute_runtime sets the result's outputs (xpack_pipeline.h): run three times with one result struct, a
 * runtime gives its outputs' count and hashes each time, as xpack_run_delegate does. It once appended them (a review
 * found num_outputs 1, 2, 3 for a one-output graph).
 * Usage: execute_runtime PROGRAM.pte (its first method's first delegate, an XNNPACK one) */
#include <stdio.h>
#include <string.h>

#include <xnnpack.h>

#include "expect.h"
#include "xpack_executorch.h"
#include "xpack_pipeline.h"
#include "xpack_replay.h"

int main(int argc, char** argv) {
  if (argc != 2 || xnn_initialize(NULL) != xnn_status_success) return 2;
  xpack_error err;
  xpack_et_program* program = NULL;
  xpack_et_xnn_graph* graph = NULL;
  if (xpack_et_program_open(argv[1], &program, &err) != XPACK_OK ||
      xpack_et_xnn_graph_open(program, 0, 0, &graph, &err) != XPACK_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  const xpack_et_named_sources sources = {program, NULL, 0};
  xpack_replay_subgraph replay;
  EXPECT(xpack_replay_define(graph, &sources, NULL, NULL, &replay, &err) == XPACK_OK);
  xnn_runtime_t runtime = NULL;
  EXPECT(xpack_replay_create_runtime(&replay, NULL, &runtime) == xnn_status_success);
  const xpack_delegate_ref ref = {0, 0, 0, "program.pte", "forward", NULL};
  xpack_run_result first, again;
  memset(&first, 0, sizeof first);
  EXPECT(xpack_execute_runtime(runtime, &replay, &ref, &first, &err) == XPACK_OK);
  EXPECT(first.num_outputs >= 1);
  memcpy(&again, &first, sizeof again); /* the same struct, filled by the run before */
  for (int round = 0; round < 2; round++) {
    EXPECT(xpack_execute_runtime(runtime, &replay, &ref, &again, &err) == XPACK_OK);
    EXPECT_MSG(again.num_outputs == first.num_outputs, "round %d: %zu outputs, the first run had %zu", round,
               again.num_outputs, first.num_outputs);
    EXPECT(memcmp(again.output_hash, first.output_hash, first.num_outputs * sizeof first.output_hash[0]) == 0);
  }
  /* An error leaves no outputs behind. */
  EXPECT(xpack_execute_runtime(runtime, NULL, &ref, &again, &err) == XPACK_ERR_ARG && again.num_outputs == 0);
  xnn_delete_runtime(runtime);
  xpack_replay_release(&replay);
  xpack_et_xnn_graph_free(graph);
  xpack_et_program_close(program);
  printf("execute_runtime: %zu outputs, the same in three runs with one result: %s\n", first.num_outputs,
         failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
