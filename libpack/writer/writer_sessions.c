/* Per-thread binding sessions of the recording writer, so that several threads can create runtimes
 * through one writer at once (xpack pack --jobs). XNNPACK calls the provider on the thread that creates the
 * runtime (no thread pool is given while packing), which is the thread that bound the runtime's weights. */
#include <stdlib.h>

#include "writer/writer_internal.h"
#include "xpack.h"

wr_session* wr_session_get(xpack_writer* w) {
  wr_session* s = pthread_getspecific(w->session_key);
  if (s != NULL) return s;
  s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  xp_bindings_init(&s->bindings);
  xp_bindings_init(&s->family_bindings);
  xp_pending_init(&s->pending);
  if (pthread_setspecific(w->session_key, s) != 0) {
    xp_bindings_destroy(&s->bindings);
    xp_bindings_destroy(&s->family_bindings);
    xp_pending_destroy(&s->pending);
    free(s);
    return NULL;
  }
  pthread_mutex_lock(&w->lock);
  s->next = w->sessions;
  w->sessions = s;
  w->session_count++;
  /* One spare scratch block per packing thread: each packs weight after weight into the same pages. */
  xp_heap_set_spares(&w->heap, w->session_count);
  wr_slot_enter(w, s); /* slot 0, outside any delegate, until it begins one */
  pthread_mutex_unlock(&w->lock);
  return s;
}

void wr_sessions_destroy(xpack_writer* w) {
  while (w->sessions != NULL) {
    wr_session* s = w->sessions;
    w->sessions = s->next;
    xp_bindings_destroy(&s->bindings);
    xp_bindings_destroy(&s->family_bindings);
    xp_pending_destroy(&s->pending);
    free(s);
  }
}

xpack_status xpack_writer_begin_delegate(xpack_writer* w, uint32_t delegate_index) {
  if (w == NULL) return XPACK_ERR_ARG;
  wr_session* s = wr_session_get(w);
  if (s == NULL) return XPACK_ERR_NOMEM;
  xp_bindings_clear(&s->bindings);
  xp_bindings_clear(&s->family_bindings);
  pthread_mutex_lock(&w->lock); /* a key left in flight by a failed delegate: nobody waits for it any more */
  if (s->packing) {
    s->packing = 0;
    pthread_cond_broadcast(&w->packed);
  }
  wr_slot_leave(w, s);
  s->ticket_base = ((uint64_t)delegate_index + 1) << WR_SLOT_SHIFT;
  s->events = 0;
  wr_slot_enter(w, s);
  pthread_mutex_unlock(&w->lock);
  return XPACK_OK;
}

xpack_status xpack_writer_end_delegate(xpack_writer* w) {
  if (w == NULL) return XPACK_ERR_ARG;
  wr_session* s = wr_session_get(w);
  if (s == NULL) return XPACK_ERR_NOMEM;
  pthread_mutex_lock(&w->lock);
  wr_slot_leave(w, s);
  pthread_mutex_unlock(&w->lock);
  return XPACK_OK;
}

xpack_status xpack_writer_bind(xpack_writer* w, const void* raw, const char* identity, size_t identity_len) {
  if (w == NULL || raw == NULL || identity == NULL || identity_len == 0 || identity_len >= XP_MAX_IDENTITY) {
    return XPACK_ERR_ARG;
  }
  wr_session* s = wr_session_get(w);
  if (s == NULL) return XPACK_ERR_NOMEM;
  return xp_bindings_set(&s->bindings, raw, identity, identity_len);
}

void xpack_writer_unbind_all(xpack_writer* w) {
  if (w == NULL) return;
  wr_session* s = wr_session_get(w);
  if (s == NULL) return;
  xp_bindings_clear(&s->bindings);
  xp_bindings_clear(&s->family_bindings);
}
