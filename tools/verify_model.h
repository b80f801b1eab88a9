/* verify --model: does a cache hold exactly what this machine's XNNPACK packs for a model, and does
 * running with it give the same outputs as running without? */
#ifndef XPACK_TOOLS_VERIFY_MODEL_H
#define XPACK_TOOLS_VERIFY_MODEL_H

#include "cli_cache_source.h"
#include "xpack_pipeline.h"
#include "xpack.h"

/* What the comparison with the models covered, so that a clean report says how much it rests on. */
typedef struct model_verdict {
  uint64_t weights_compared;    /* packed weights of the re-pack looked for in the cache */
  uint64_t weights_agreeing;    /* of them: found, with the same size and bytes */
  int ran;                      /* 1: the delegates were run with the cache (every weight agreed) */
  uint64_t delegates_run;       /* XNNPACK delegates run with and without the cache */
  uint64_t delegates_identical; /* of them: every output bit for bit the same */
  uint64_t lookups, hits, misses; /* the cache's look-ups during those runs */
} model_verdict;

/* Re-packs `set` into a temporary file, compares every packed weight with the cache's entry byte for byte,
 * then runs every delegate with and without the cache comparing outputs bit for bit. Each difference is
 * reported through fn, and *out says what was covered. Returns 0 when the comparison ran (problems counted
 * in *problems), else an exit code. */
int verify_against_model(const cli_cache_source* source, const xpack_model_set* set, xpack_problem_fn fn, void* context,
                         uint64_t* problems, model_verdict* out);

#endif
