#include "loader/pending_keys.h"

#include <stdlib.h>
#include <string.h>

void xp_pending_init(xp_pending_keys* p) {
  memset(p, 0, sizeof *p);
  pthread_mutex_init(&p->lock, NULL);
}

void xp_pending_destroy(xp_pending_keys* p) {
  free(p->keys);
  pthread_mutex_destroy(&p->lock);
  memset(p, 0, sizeof *p);
}

int xp_pending_add(xp_pending_keys* p, const struct xnn_weights_cache_look_up_key* key) {
  pthread_mutex_lock(&p->lock);
  if (p->count == p->capacity) {
    size_t cap = p->capacity ? p->capacity * 2 : 16;
    struct xnn_weights_cache_look_up_key* grown = realloc(p->keys, cap * sizeof *grown);
    if (grown == NULL) {
      pthread_mutex_unlock(&p->lock);
      return -1;
    }
    p->keys = grown;
    p->capacity = cap;
  }
  p->keys[p->count++] = *key;
  pthread_mutex_unlock(&p->lock);
  return 0;
}

int xp_pending_take(xp_pending_keys* p, const struct xnn_weights_cache_look_up_key* key) {
  int found = 0;
  pthread_mutex_lock(&p->lock);
  for (size_t i = p->count; i-- > 0;) { /* newest first: the insert follows its look-up closely */
    const struct xnn_weights_cache_look_up_key* k = &p->keys[i];
    if (k->seed == key->seed && k->kernel == key->kernel && k->bias == key->bias) {
      p->keys[i] = p->keys[--p->count];
      found = 1;
      break;
    }
  }
  pthread_mutex_unlock(&p->lock);
  return found;
}
