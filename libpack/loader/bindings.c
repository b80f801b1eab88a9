#include "loader/bindings.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cachefile/cache_view.h"
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

static void forget(xp_binding* s) {
  free(s->identity);
  free(s->sizes);
  *s = (xp_binding){0};
}

static void free_slots(xp_binding* slots, size_t capacity) {
  for (size_t i = 0; i < capacity; i++) forget(&slots[i]);
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

/* Leaves ptr bound to nothing. Its slot keeps ptr (the slots after it in its probe chain stay reachable) with no
 * identity, which reads as unbound. Lock held. */
static void unbind_locked(xp_bindings* b, const void* ptr) {
  if (ptr == NULL || b->capacity == 0) return;
  xp_binding* s = find_slot(b->slots, b->capacity, ptr);
  if (s->ptr == NULL) return;
  forget(s);
  s->ptr = ptr;
}

void xp_bindings_unbind(xp_bindings* b, const void* ptr) {
  pthread_rwlock_wrlock(&b->lock);
  unbind_locked(b, ptr);
  pthread_rwlock_unlock(&b->lock);
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
  if (copy == NULL) {
    xp_bindings_unbind(b, ptr);
    return XPACK_ERR_NOMEM;
  }
  memcpy(copy, identity, len);
  copy[len] = 0;
  pthread_rwlock_wrlock(&b->lock);
  if ((b->count + 1) * 4 > b->capacity * 3 && grow(b) != 0) {
    unbind_locked(b, ptr);
    pthread_rwlock_unlock(&b->lock);
    free(copy);
    return XPACK_ERR_NOMEM;
  }
  xp_binding* s = find_slot(b->slots, b->capacity, ptr);
  if (s->ptr == NULL) b->count++;
  forget(s);
  *s = (xp_binding){.ptr = ptr, .identity = copy, .len = len};
  pthread_rwlock_unlock(&b->lock);
  return XPACK_OK;
}

/* The size recorded for (seed, bias) in a kernel's binding, or NULL. */
static xp_bound_size* size_of(const xp_binding* s, uint32_t seed, const void* bias) {
  for (size_t i = 0; i < s->size_count; i++) {
    if (s->sizes[i].seed == seed && s->sizes[i].bias == bias) return &s->sizes[i];
  }
  return NULL;
}

xpack_status xp_bindings_set_size(xp_bindings* b, uint32_t seed, const void* kernel, const void* bias, size_t size) {
  xpack_status st = XPACK_ERR_ARG;
  if (kernel == NULL) return st;
  pthread_rwlock_wrlock(&b->lock);
  xp_binding* s = b->capacity != 0 ? find_slot(b->slots, b->capacity, kernel) : NULL;
  if (s != NULL && s->identity != NULL) {
    xp_bound_size* known = size_of(s, seed, bias);
    if (known != NULL) {
      known->size = size;
      st = XPACK_OK;
    } else {
      xp_bound_size* grown = realloc(s->sizes, (s->size_count + 1) * sizeof *grown);
      st = XPACK_ERR_NOMEM;
      if (grown != NULL) {
        grown[s->size_count++] = (xp_bound_size){seed, bias, size};
        s->sizes = grown;
        st = XPACK_OK;
      }
    }
  }
  pthread_rwlock_unlock(&b->lock);
  return st;
}

void xp_bindings_clear(xp_bindings* b) {
  pthread_rwlock_wrlock(&b->lock);
  for (size_t i = 0; i < b->capacity; i++) forget(&b->slots[i]);
  b->count = 0;
  pthread_rwlock_unlock(&b->lock);
}

/* Copies the identity of the binding into buf (see xp_bindings_get). Lock held. */
static size_t copy_identity(const xp_binding* s, char* buf, size_t cap) {
  size_t n = s->len < cap - 1 ? s->len : cap - 1;
  memcpy(buf, s->identity, n);
  buf[n] = 0;
  return s->len;
}

static const xp_binding* binding_of(const xp_bindings* b, const void* ptr) {
  if (ptr == NULL || b->capacity == 0) return NULL;
  const xp_binding* s = find_slot(b->slots, b->capacity, ptr);
  return s->identity != NULL ? s : NULL; /* an empty slot, or a pointer unbound after a failed binding */
}

size_t xp_bindings_get(xp_bindings* b, const void* ptr, char* buf, size_t cap) {
  pthread_rwlock_rdlock(&b->lock);
  const xp_binding* s = binding_of(b, ptr);
  size_t result = s != NULL ? copy_identity(s, buf, cap) : (size_t)-1;
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
  const char* zero = memchr(identity, 0, len);
  if (zero != NULL) { /* a cache's strings hold none (FORMAT.md 5.4): such an identity could never be found */
    return xp_fail(err, XPACK_ERR_ARG, "%s: the identity holds a zero byte at position %zu of its %zu", fn,
                   (size_t)(zero - identity), len);
  }
  return XPACK_OK;
}

int xp_bindings_resolve_key(xp_bindings* b, uint32_t seed, const void* kernel, const void* bias,
                            xp_key_identities* out) {
  int result = -1;
  out->has_bias = bias != NULL;
  out->bias_len = 0;
  out->bias[0] = 0;
  out->has_size = 0;
  out->size = 0;
  pthread_rwlock_rdlock(&b->lock);
  const xp_binding* k = binding_of(b, kernel);
  const xp_binding* bb = binding_of(b, bias);
  if (k != NULL && (bias == NULL || bb != NULL)) {
    out->kernel_len = copy_identity(k, out->kernel, sizeof out->kernel);
    if (bb != NULL) out->bias_len = copy_identity(bb, out->bias, sizeof out->bias);
    const xp_bound_size* known = size_of(k, seed, bias);
    out->has_size = known != NULL;
    if (known != NULL) out->size = known->size;
    result = out->kernel_len < sizeof out->kernel && out->bias_len < sizeof out->bias ? 0 : -1;
    /* A weight packed in more than one way names no entry (XPACK_IDENTITY_AMBIGUOUS), as a kernel or as a
     * bias: a key naming the bias so would be one key for every bias that pointer stands for. */
    if (xp_identity_is_ambiguous(out->kernel, out->kernel_len)) result = -1;
    if (bb != NULL && xp_identity_is_ambiguous(out->bias, out->bias_len)) result = -1;
  }
  pthread_rwlock_unlock(&b->lock);
  return result;
}
