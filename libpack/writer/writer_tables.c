/* Growable arrays, a hash index and string interning for the writer's in-memory tables. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "writer/writer_internal.h"
#include "xpc_format.h"

int xp_writer_reserve(void** array, size_t* cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  size_t n = *cap ? *cap : 16;
  while (n < need) n *= 2;
  void* grown = realloc(*array, n * elem);
  if (grown == NULL) return -1;
  *array = grown;
  *cap = n;
  return 0;
}

int xp_writer_index_init(xp_writer_index* ix) {
  ix->capacity = 256;
  ix->count = 0;
  ix->hashes = calloc(ix->capacity, sizeof *ix->hashes);
  ix->values = calloc(ix->capacity, sizeof *ix->values);
  return (ix->hashes && ix->values) ? 0 : -1;
}

void xp_writer_index_free(xp_writer_index* ix) {
  free(ix->hashes);
  free(ix->values);
  memset(ix, 0, sizeof *ix);
}

static void put_raw(uint64_t* hashes, uint32_t* values, size_t capacity, uint64_t hash, uint32_t stored) {
  size_t i = (size_t)(hash ^ (hash >> 29)) & (capacity - 1);
  while (values[i] != 0) i = (i + 1) & (capacity - 1);
  hashes[i] = hash;
  values[i] = stored;
}

int xp_writer_index_put(xp_writer_index* ix, uint64_t hash, uint32_t value) {
  if ((ix->count + 1) * 2 > ix->capacity) {
    size_t cap = ix->capacity * 2;
    uint64_t* hashes = calloc(cap, sizeof *hashes);
    uint32_t* values = calloc(cap, sizeof *values);
    if (hashes == NULL || values == NULL) {
      free(hashes);
      free(values);
      return -1;
    }
    for (size_t i = 0; i < ix->capacity; i++) {
      if (ix->values[i] != 0) put_raw(hashes, values, cap, ix->hashes[i], ix->values[i]);
    }
    free(ix->hashes);
    free(ix->values);
    ix->hashes = hashes;
    ix->values = values;
    ix->capacity = cap;
  }
  put_raw(ix->hashes, ix->values, ix->capacity, hash, value + 1);
  ix->count++;
  return 0;
}

int xp_writer_index_next(const xp_writer_index* ix, uint64_t hash, size_t* cursor, uint32_t* value) {
  /* *cursor counts probes already made from the home slot. */
  size_t home = (size_t)(hash ^ (hash >> 29)) & (ix->capacity - 1);
  for (size_t step = *cursor; step < ix->capacity; step++) {
    size_t i = (home + step) & (ix->capacity - 1);
    if (ix->values[i] == 0) return 0;
    if (ix->hashes[i] == hash) {
      *cursor = step + 1;
      *value = ix->values[i] - 1;
      return 1;
    }
  }
  return 0;
}

uint32_t xp_writer_intern(xpack_writer* w, const char* s, size_t len) {
  uint64_t h = XXH3_64bits(s, len);
  size_t cursor = 0;
  uint32_t idx;
  while (xp_writer_index_next(&w->string_index, h, &cursor, &idx)) {
    if (w->strings[idx].len == len && memcmp(w->strings[idx].text, s, len) == 0) {
      if (w->intern_ticket < w->strings[idx].ticket) w->strings[idx].ticket = w->intern_ticket;
      return idx;
    }
  }
  if (xp_writer_reserve((void**)&w->strings, &w->string_cap, w->string_count + 1, sizeof *w->strings) != 0) return XPC_NONE;
  char* copy = malloc(len + 1);
  if (copy == NULL) return XPC_NONE;
  memcpy(copy, s, len);
  copy[len] = 0;
  idx = (uint32_t)w->string_count;
  if (xp_writer_index_put(&w->string_index, h, idx) != 0) {
    free(copy);
    return XPC_NONE;
  }
  w->strings[w->string_count++] = (xp_writer_string){copy, (uint32_t)len, h, w->intern_ticket};
  return idx;
}
