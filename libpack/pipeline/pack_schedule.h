/* Which delegate a packing worker takes next (xpack_pack_options.jobs > 1).
 *
 * Delegates that share a raw weight (prefill and decode of one model, say) pack it once: the second finds it
 * in the writer. Packing them at the same time gains nothing, because the writer makes one wait for the
 * other, and costs memory, because both hold their replayed subgraphs. So a worker takes the first delegate,
 * in file order, that shares no raw weight with a delegate in flight, and waits when there is none. Which
 * worker packs what never changes the file (the writer orders regions by delegate index). */
#ifndef XPACK_PIPELINE_PACK_SCHEDULE_H
#define XPACK_PIPELINE_PACK_SCHEDULE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "xpack_pipeline.h"

typedef struct xp_pack_schedule {
  pthread_mutex_t lock;
  pthread_cond_t changed; /* a delegate finished, or the schedule stopped */
  size_t count;
  uintptr_t** weights;  /* per delegate: the addresses of its raw constants in the mapped files, sorted */
  size_t* weight_count; /* per delegate */
  unsigned char* state; /* per delegate: 0 waiting, 1 in flight, 2 done */
  int reverse; /* take the last waiting delegate first (tests: regions arrive out of file order) */
  int stop;
} xp_pack_schedule;

/* A schedule of `count` delegates, none of them listed yet. Returns 0, or -1 when out of memory. */
int xp_pack_schedule_init(xp_pack_schedule* s, size_t count, int reverse);
/* Lists the raw constants of delegate `index` (a delegate that cannot be parsed gets none: its replay reports
 * the error). Call it for every delegate before the first xp_pack_schedule_take. Returns 0, or -1 when out of
 * memory. */
int xp_pack_schedule_list(xp_pack_schedule* s, size_t index, const xpack_model_set* set, const xpack_delegate_ref* ref);
void xp_pack_schedule_destroy(xp_pack_schedule* s);
/* The next delegate for this worker, waiting while every waiting delegate shares a weight with one in flight;
 * SIZE_MAX when none is left or the schedule stopped. */
size_t xp_pack_schedule_take(xp_pack_schedule* s);
/* Marks a delegate taken by xp_pack_schedule_take as done; stop = 1 starts no further delegates. */
void xp_pack_schedule_done(xp_pack_schedule* s, size_t index, int stop);

#endif
