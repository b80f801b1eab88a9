/* The one identity each raw weight pointer of a delegate ends up bound to (xp_replay_bind, replay_internal.h).
 *
 * XNNPACK keys its weights cache by pointer, and several constants of a delegate can resolve to one pointer: two
 * named keys on one segment (ExecuTorch's NamedDataStore stores equal bytes once), a legacy buffer shared by two
 * indexes, scales whose bytes equal a weight's. Bound one after another, the last binding named the pointer for
 * every use, so the packing of one use was recorded under, and served to, another's name (found by a review on
 * 2026-11-28: FC [8, 17] and [17, 8] under two keys, wrong outputs from the program's own cache, and from a cache
 * packed with it for a clean program). A pointer that two constants name differently names nothing: it is bound
 * to XPACK_IDENTITY_AMBIGUOUS, as the ExecuTorch adapter binds it. XNNPACK looks weights up only once the
 * runtime is created, after every define, so the last binding is the one its look-ups meet. */
#include <stdlib.h>
#include <string.h>

#include "replay/replay_internal.h"
#include "xpack_loader.h"

static size_t slot_of(const void* ptr, size_t capacity) {
  uintptr_t x = (uintptr_t)ptr;
  x ^= x >> 17;
  x *= (uintptr_t)0x9E3779B97F4A7C15ull;
  return (size_t)(x ^ (x >> 29)) & (capacity - 1);
}

/* Room for one more pointer, the table at most half full. */
static int grow(xp_replay_bindings* t) {
  if ((t->count + 1) * 2 <= t->capacity) return 0;
  const size_t capacity = t->capacity ? t->capacity * 2 : 64;
  xp_replay_bound* slots = calloc(capacity, sizeof *slots);
  if (slots == NULL) return -1;
  for (size_t i = 0; i < t->capacity; i++) {
    if (t->slots[i].ptr == NULL) continue;
    size_t at = slot_of(t->slots[i].ptr, capacity);
    while (slots[at].ptr != NULL) at = (at + 1) & (capacity - 1);
    slots[at] = t->slots[i];
  }
  free(t->slots);
  t->slots = slots;
  t->capacity = capacity;
  return 0;
}

/* The slot holding ptr, or the empty one where it belongs. capacity > 0. */
static xp_replay_bound* slot_for(const xp_replay_bindings* t, const void* ptr) {
  size_t at = slot_of(ptr, t->capacity);
  while (t->slots[at].ptr != NULL && t->slots[at].ptr != ptr) at = (at + 1) & (t->capacity - 1);
  return &t->slots[at];
}

xpack_status xp_replay_bind(xp_replay_state* s, const void* ptr, const char* identity, size_t len) {
  xp_replay_bindings* t = &s->bound;
  if (grow(t) != 0) return XPACK_ERR_NOMEM;
  xp_replay_bound* b = slot_for(t, ptr);
  if (b->ptr == NULL) { /* the pointer's first binding */
    char* copy = malloc(len + 1);
    if (copy == NULL) return XPACK_ERR_NOMEM;
    memcpy(copy, identity, len);
    copy[len] = '\0';
    *b = (xp_replay_bound){ptr, copy, len};
    t->count++;
    s->bind(s->bind_context, ptr, identity, len);
    return XPACK_OK;
  }
  if (b->identity == NULL) return XPACK_OK; /* ambiguous already */
  if (b->len == len && memcmp(b->identity, identity, len) == 0) return XPACK_OK;
  free(b->identity);
  b->identity = NULL;
  s->bind(s->bind_context, ptr, XPACK_IDENTITY_AMBIGUOUS, sizeof XPACK_IDENTITY_AMBIGUOUS - 1);
  return XPACK_OK;
}

bool xp_replay_bound_before(const xp_replay_state* s, const void* ptr) {
  return s->bound.capacity != 0 && slot_for(&s->bound, ptr)->ptr != NULL;
}

void xp_replay_bindings_free(xp_replay_bindings* t) {
  for (size_t i = 0; i < t->capacity; i++) free(t->slots[i].identity);
  free(t->slots);
  memset(t, 0, sizeof *t);
}
