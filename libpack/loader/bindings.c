#include "loader/bindings.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

static size_t slot_of(const void* ptr, size_t capacity) {
  uint64_t x = (uint64_t)(uintptr_t)ptr;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x & (capacity - 1);
}

void xp_bindings_init(xp_bindings* b) {
  memset(b, 0, sizeof *b);
  pthread_rwlock_init(&b->lock, NULL);
}

static void free_slots(xp_binding* slots, size_t capacity) {
  for (size_t i = 0; i < capacity; i++) free(slots[i].identity);
  free(slots);
}

void xp_bindings_destroy(xp_bindings* b) {
  free_slots(b->slots, b->capacity);
  pthread_rwlock_destroy(&b->lock);
  memset(b, 0, sizeof *b);
}

static xp_binding* find_slot(xp_binding* slots, size_t capacity, const void* ptr) {
  size_t i = slot_of(ptr, capacity);
  while (slots[i].ptr != NULL && slots[i].ptr != ptr) i = (i + 1) & (capacity - 1);
  return &slots[i];
}

static int grow(xp_bindings* b) {
  size_t capacity = b->capacity ? b->capacity * 2 : 64;
  xp_binding* slots = calloc(capacity, sizeof *slots);
  if (slots == NULL) return -1;
  for (size_t i = 0; i < b->capacity; i++) {
    if (b->slots[i].ptr != NULL) *find_slot(slots, capacity, b->slots[i].ptr) = b->slots[i];
  }
  free(b->slots);
  b->slots = slots;
  b->capacity = capacity;
  return 0;
}

xpack_status xp_bindings_set(xp_bindings* b, const void* ptr, const char* identity, size_t len) {
  if (ptr == NULL || identity == NULL) return XPACK_ERR_ARG;
  char* copy = malloc(len + 1);
  if (copy == NULL) return XPACK_ERR_NOMEM;
  memcpy(copy, identity, len);
  copy[len] = 0;
  pthread_rwlock_wrlock(&b->lock);
  if ((b->count + 1) * 4 > b->capacity * 3 && grow(b) != 0) {
    pthread_rwlock_unlock(&b->lock);
    free(copy);
    return XPACK_ERR_NOMEM;
  }
  xp_binding* s = find_slot(b->slots, b->capacity, ptr);
  if (s->ptr == NULL) b->count++;
  free(s->identity);
  s->ptr = ptr;
  s->identity = copy;
  s->len = len;
  pthread_rwlock_unlock(&b->lock);
  return XPACK_OK;
}

void xp_bindings_clear(xp_bindings* b) {
  pthread_rwlock_wrlock(&b->lock);
  for (size_t i = 0; i < b->capacity; i++) {
    free(b->slots[i].identity);
    b->slots[i].identity = NULL;
    b->slots[i].ptr = NULL;
  }
  b->count = 0;
  pthread_rwlock_unlock(&b->lock);
}

size_t xp_bindings_get(xp_bindings* b, const void* ptr, char* buf, size_t cap) {
  size_t result = (size_t)-1;
  if (ptr == NULL) return result;
  pthread_rwlock_rdlock(&b->lock);
  if (b->capacity != 0) {
    const xp_binding* s = find_slot(b->slots, b->capacity, ptr);
    if (s->ptr != NULL) {
      result = s->len;
      size_t n = s->len < cap - 1 ? s->len : cap - 1;
      memcpy(buf, s->identity, n);
      buf[n] = 0;
    }
  }
  pthread_rwlock_unlock(&b->lock);
  return result;
}

xpack_status xp_bind_check(const char* fn, const void* owner, const char* owner_name, const void* raw,
                           const char* identity, size_t len, xpack_error* err) {
  if (owner == NULL || raw == NULL || identity == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "%s: %s is NULL", fn,
                   owner == NULL ? owner_name : raw == NULL ? "the weight pointer" : "the identity");
  }
  if (len == 0 || len >= XP_MAX_IDENTITY) {
    return xp_fail(err, XPACK_ERR_ARG, "%s: an identity of %zu bytes (expected 1..%zu)", fn, len, (size_t)XP_MAX_IDENTITY - 1);
  }
  return XPACK_OK;
}

int xp_bindings_resolve_key(xp_bindings* b, const void* kernel, const void* bias, xp_key_identities* out) {
  out->kernel_len = xp_bindings_get(b, kernel, out->kernel, sizeof out->kernel);
  if (out->kernel_len == (size_t)-1 || out->kernel_len >= sizeof out->kernel) return -1;
  out->has_bias = bias != NULL;
  out->bias_len = 0;
  out->bias[0] = 0;
  if (out->has_bias) {
    out->bias_len = xp_bindings_get(b, bias, out->bias, sizeof out->bias);
    if (out->bias_len == (size_t)-1 || out->bias_len >= sizeof out->bias) return -1;
  }
  return 0;
}
