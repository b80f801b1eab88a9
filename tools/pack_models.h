/* Packing every XNNPACK delegate of a model set through one recording writer (pack and verify --model). */
#ifndef XPACK_TOOLS_PACK_MODELS_H
#define XPACK_TOOLS_PACK_MODELS_H

#include "delegate_runner.h"
#include "progress.h"
#include "xpack.h"

typedef struct pack_counts {
  size_t xnnpack, packed, not_packed, skipped;
  int bad_input; /* a malformed delegate: the caller fails with exit 3 */
  xpack_error first_error;
} pack_counts;

/* Records the inputs' provenance and replays every delegate into `writer`. Notes and errors go to
 * stderr (quiet with -q). Returns 0, or an exit code when a delegate is malformed. */
int pack_model_set(const model_set* set, xpack_writer* writer, pack_counts* counts);

/* pack_model_set, advancing `bar` (may be NULL) once per delegate with the bytes packed so far. */
int pack_model_set_progress(const model_set* set, xpack_writer* writer, progress* bar, pack_counts* counts);

/* pack_model_set_progress on `jobs` threads (the caller's among them): each replays one delegate at a time
 * into the writer. The file is the same bytes for any jobs; notes and errors come in delegate order once
 * every delegate is done. After a malformed delegate no other is started. jobs <= 1: one after another. */
int pack_model_set_jobs(const model_set* set, xpack_writer* writer, progress* bar, int jobs, pack_counts* counts);

#endif
