/* The heap fallbacks of an open cache by key: the seed and the kernel and bias identities of each weight that
 * XNNPACK packed after a miss and the loader kept, so that a later look-up of the same key (the next runtime of a
 * method, another method sharing the weight) is answered with that packing instead of XNNPACK packing it, and
 * the loader keeping it, once more. Without it an app that creates runtimes again and again with misses would
 * grow by every missed weight each time, as no XNNPACK says when a runtime is deleted.
 *
 * Keys are identities, never raw pointers: a pointer may be freed and reused for other bytes, an identity names
 * the bytes (libpack/et/IDENTITY.md), as the file's own entries do. Thread safe. */
#ifndef XPACK_SRC_KEPT_WEIGHTS_H
#define XPACK_SRC_KEPT_WEIGHTS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "loader/bindings.h"

typedef struct xp_kept_weight {
  char* identities; /* owned: the kernel's identity then the bias's; NULL = empty slot */
  size_t kernel_len, bias_len;
  uint64_t hash;
  uint32_t seed;
  int has_bias;
  size_t offset; /* the heap pool's offset of the packed bytes */
  size_t size;   /* their count */
} xp_kept_weight;

typedef struct xp_kept_weights {
  pthread_mutex_t lock;
  xp_kept_weight* slots;
  size_t capacity; /* power of two, or 0 */
  size_t count;
} xp_kept_weights;

void xp_kept_init(xp_kept_weights* k);
void xp_kept_destroy(xp_kept_weights* k); /* frees the table, not the packed bytes (the heap pool owns them) */
/* The heap offset of the weight kept for (seed, ids), and its size in *size; SIZE_MAX if none is. */
size_t xp_kept_find(xp_kept_weights* k, uint32_t seed, const xp_key_identities* ids, size_t* size);
/* Records that the weight of (seed, ids) lives at the heap offset, size bytes, unless one is already recorded
 * for that key (the first stays). Out of memory records nothing: the weight is then packed again next time. */
void xp_kept_add(xp_kept_weights* k, uint32_t seed, const xp_key_identities* ids, size_t offset, size_t size);

#endif
