/* Walking every delegate of a model set, and creating (and optionally running) an XNNPACK runtime for one. */
#ifndef XPACK_TOOLS_DELEGATE_RUNNER_H
#define XPACK_TOOLS_DELEGATE_RUNNER_H

#include <stdint.h>

#include "model_set.h"
#include "xpack_replay.h"

#define RUN_MAX_OUTPUTS 16

typedef struct delegate_ref {
  size_t program, method, delegate;
  const char* file;        /* base name of the program */
  const char* method_name; /* "" when unnamed */
  const xpack_et_delegate* info;
} delegate_ref;

/* Called for every delegate of every method of every program (of `only_method` when not NULL).
 * Returns 0 to go on, anything else to stop and return it. */
typedef int (*delegate_fn)(void* context, const model_set* set, const delegate_ref* ref);
int for_each_delegate(const model_set* set, const char* only_method, delegate_fn fn, void* context);

typedef struct run_result {
  double create_ms;
  double first_inference_ms;
  size_t num_outputs;
  uint64_t output_hash[RUN_MAX_OUTPUTS];
} run_result;

/* Replays the delegate, creates a runtime with `provider` (may be NULL), binding weights through bind
 * (with bind_to_writer, also every filter's packing family: xpack_writer_bind_family),
 * unbinds through unbind (may be NULL) right after creation, and when `execute` runs it once with inputs
 * seeded from (method, delegate, input). Errors: as xpack_et_xnn_graph_open and xpack_replay_define, and
 * XPACK_ERR_XNNPACK for runtime failures. The message names file, method and delegate. */
xpack_status run_delegate(const model_set* set, const delegate_ref* ref, struct xnn_weights_cache_provider* provider,
                          xpack_bind_fn bind, void* bind_context, void (*unbind)(void* bind_context), int execute,
                          run_result* out, xpack_error* err);

/* Runs a created runtime once with inputs seeded from (method, delegate, input), as run_delegate does, and sets
 * out->first_inference_ms (reshape + setup + invoke), num_outputs and output_hash. Errors: XPACK_ERR_NOMEM,
 * XPACK_ERR_XNNPACK (the message names file, method and delegate). */
xpack_status execute_runtime(xnn_runtime_t runtime, const xpack_replay_subgraph* replay, const delegate_ref* ref,
                             run_result* out, xpack_error* err);

/* Bind callbacks for run_delegate: context is an xpack_cache* or an xpack_writer*. */
void bind_to_cache(void* cache, const void* raw, const char* identity, size_t len);
void unbind_from_cache(void* cache);
void bind_to_writer(void* writer, const void* raw, const char* identity, size_t len);
void unbind_from_writer(void* writer);

#endif
