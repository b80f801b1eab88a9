/* verify --model: does a cache hold exactly what this machine's XNNPACK packs for a model, and does
 * running with it give the same outputs as running without? */
#ifndef XPACK_TOOLS_VERIFY_MODEL_H
#define XPACK_TOOLS_VERIFY_MODEL_H

#include "xpack_pipeline.h"
#include "xpack.h"

/* Re-packs `set` into a temporary file, compares every packed weight with the cache's entry byte for byte,
 * then runs every delegate with and without the cache comparing outputs bit for bit. Each difference is
 * reported through fn. Returns 0 when the comparison ran (problems counted in *problems), else an exit code. */
int verify_against_model(const char* cache_path, const xpack_model_set* set, xpack_problem_fn fn, void* context,
                         uint64_t* problems);

#endif
