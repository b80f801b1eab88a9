/* Keys that missed a look-up, so the insert XNNPACK makes right after is known to follow that look-up
 * (rather than being an insert without a look-up, which XNNPACK does for some operators). Thread safe. */
#ifndef XPACK_SRC_PENDING_KEYS_H
#define XPACK_SRC_PENDING_KEYS_H

#include <pthread.h>
#include <stddef.h>
#include <xnnpack.h>

typedef struct xp_pending_keys {
  pthread_mutex_t lock;
  struct xnn_weights_cache_look_up_key* keys;
  size_t count, capacity;
} xp_pending_keys;

void xp_pending_init(xp_pending_keys* p);
void xp_pending_destroy(xp_pending_keys* p);
/* Remembers key. Returns 0, or -1 when it cannot allocate: the key is then forgotten (for the loader only a
 * statistic is affected; the writer fails, since it records whether an entry followed a look-up). */
int xp_pending_add(xp_pending_keys* p, const struct xnn_weights_cache_look_up_key* key);
/* Removes key and returns 1 if it was remembered, else 0. */
int xp_pending_take(xp_pending_keys* p, const struct xnn_weights_cache_look_up_key* key);

#endif
