#include "loader/kept_weights.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

void xp_kept_init(xp_kept_weights* k) {
  memset(k, 0, sizeof *k);
  pthread_mutex_init(&k->lock, NULL);
}

void xp_kept_destroy(xp_kept_weights* k) {
  for (size_t i = 0; i < k->capacity; i++) free(k->slots[i].identities);
  free(k->slots);
  pthread_mutex_destroy(&k->lock);
  memset(k, 0, sizeof *k);
}

static uint64_t key_hash(uint32_t seed, const xp_key_identities* ids) {
  uint64_t h = XXH3_64bits_withSeed(ids->kernel, ids->kernel_len, seed);
  /* A key without a bias and one whose bias identity is empty are different keys. */
  return ids->has_bias ? XXH3_64bits_withSeed(ids->bias, ids->bias_len, h) : h ^ 0x9e3779b97f4a7c15ull;
}

static int same_key(const xp_kept_weight* w, uint64_t hash, uint32_t seed, const xp_key_identities* ids) {
  return w->hash == hash && w->seed == seed && w->has_bias == ids->has_bias && w->kernel_len == ids->kernel_len &&
         memcmp(w->identities, ids->kernel, ids->kernel_len) == 0 &&
         (!ids->has_bias ||
          (w->bias_len == ids->bias_len && memcmp(w->identities + w->kernel_len, ids->bias, ids->bias_len) == 0));
}

/* The slot holding the key, or the empty slot where it belongs. Caller holds the lock; capacity > 0. */
static xp_kept_weight* slot_of(xp_kept_weights* k, uint64_t hash, uint32_t seed, const xp_key_identities* ids) {
  for (size_t i = (size_t)hash & (k->capacity - 1);; i = (i + 1) & (k->capacity - 1)) {
    xp_kept_weight* w = &k->slots[i];
    if (w->identities == NULL || same_key(w, hash, seed, ids)) return w;
  }
}

size_t xp_kept_find(xp_kept_weights* k, uint32_t seed, const xp_key_identities* ids, size_t* size) {
  const uint64_t hash = key_hash(seed, ids);
  size_t offset = SIZE_MAX;
  pthread_mutex_lock(&k->lock);
  if (k->count > 0) {
    const xp_kept_weight* w = slot_of(k, hash, seed, ids);
    if (w->identities != NULL) {
      offset = w->offset;
      *size = w->size;
    }
  }
  pthread_mutex_unlock(&k->lock);
  return offset;
}

/* Doubles the table (at most half full). Caller holds the lock. 0, or -1 out of memory. */
static int grow(xp_kept_weights* k) {
  const size_t capacity = k->capacity ? k->capacity * 2 : 64;
  xp_kept_weight* slots = calloc(capacity, sizeof *slots);
  if (slots == NULL) return -1;
  xp_kept_weight* old = k->slots;
  const size_t old_capacity = k->capacity;
  k->slots = slots;
  k->capacity = capacity;
  for (size_t i = 0; i < old_capacity; i++) {
    if (old[i].identities == NULL) continue;
    size_t j = (size_t)old[i].hash & (capacity - 1);
    while (slots[j].identities != NULL) j = (j + 1) & (capacity - 1);
    slots[j] = old[i];
  }
  free(old);
  return 0;
}

void xp_kept_add(xp_kept_weights* k, uint32_t seed, const xp_key_identities* ids, size_t offset, size_t size) {
  const uint64_t hash = key_hash(seed, ids);
  const size_t bias_len = ids->has_bias ? ids->bias_len : 0;
  pthread_mutex_lock(&k->lock);
  if ((k->count + 1) * 2 > k->capacity && grow(k) != 0) goto done;
  xp_kept_weight* w = slot_of(k, hash, seed, ids);
  if (w->identities != NULL) goto done;
  char* copy = malloc(ids->kernel_len + bias_len + 1);
  if (copy == NULL) goto done;
  memcpy(copy, ids->kernel, ids->kernel_len);
  memcpy(copy + ids->kernel_len, ids->bias, bias_len);
  copy[ids->kernel_len + bias_len] = 0;
  *w = (xp_kept_weight){copy, ids->kernel_len, bias_len, hash, seed, ids->has_bias, offset, size};
  k->count++;
done:
  pthread_mutex_unlock(&k->lock);
}
