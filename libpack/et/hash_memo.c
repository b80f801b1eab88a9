#include "et/hash_memo.h"

#include <stdlib.h>
#include <string.h>

struct xp_et_memo_slot {
  const uint8_t* data; /* NULL: empty */
  size_t size;
  XXH128_hash_t hash;
};

void xp_et_memo_init(xp_et_hash_memo* memo) {
  memset(memo, 0, sizeof *memo);
  pthread_mutex_init(&memo->lock, NULL);
  memo->ready = 1;
}

void xp_et_memo_free(xp_et_hash_memo* memo) {
  if (memo->ready) pthread_mutex_destroy(&memo->lock);
  free(memo->slots);
  memset(memo, 0, sizeof *memo);
}

static size_t slot_of(const uint8_t* data, size_t capacity) {
  uint64_t x = (uint64_t)(uintptr_t)data;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x & (capacity - 1); /* capacity is a power of two */
}

static xp_et_memo_slot* find(const xp_et_hash_memo* memo, const uint8_t* data, size_t size) {
  if (memo->capacity == 0) return NULL;
  for (size_t i = slot_of(data, memo->capacity);; i = (i + 1) & (memo->capacity - 1)) {
    xp_et_memo_slot* s = &memo->slots[i];
    if (s->data == NULL) return NULL;
    if (s->data == data && s->size == size) return s;
  }
}

/* At most half full, so that every probe ends at an empty slot. */
static int make_room(xp_et_hash_memo* memo) {
  if (2 * (memo->count + 1) <= memo->capacity) return 0;
  const size_t capacity = memo->capacity ? 2 * memo->capacity : 64;
  xp_et_memo_slot* slots = calloc(capacity, sizeof *slots);
  if (slots == NULL) return -1;
  for (size_t i = 0; i < memo->capacity; i++) {
    const xp_et_memo_slot* s = &memo->slots[i];
    if (s->data == NULL) continue;
    size_t j = slot_of(s->data, capacity);
    while (slots[j].data != NULL) j = (j + 1) & (capacity - 1);
    slots[j] = *s;
  }
  free(memo->slots);
  memo->slots = slots;
  memo->capacity = capacity;
  return 0;
}

XXH128_hash_t xp_et_memo_hash(xp_et_hash_memo* memo, const uint8_t* data, size_t size) {
  static const uint8_t empty[1];
  if (data == NULL || size == 0) return XXH3_128bits(empty, 0);
  pthread_mutex_lock(&memo->lock);
  const xp_et_memo_slot* known = find(memo, data, size);
  XXH128_hash_t hash = known ? known->hash : (XXH128_hash_t){0, 0};
  pthread_mutex_unlock(&memo->lock);
  if (known) return hash;
  hash = XXH3_128bits(data, size); /* unlocked: other delegates hash other constants meanwhile */
  pthread_mutex_lock(&memo->lock);
  if (find(memo, data, size) == NULL && make_room(memo) == 0) {
    size_t i = slot_of(data, memo->capacity);
    while (memo->slots[i].data != NULL) i = (i + 1) & (memo->capacity - 1);
    memo->slots[i] = (xp_et_memo_slot){data, size, hash};
    memo->count++;
  }
  pthread_mutex_unlock(&memo->lock);
  return hash;
}
