/* Per-thread binding sessions of the recording writer, so that several threads can create runtimes
 * through one writer at once (xpack pack --jobs). XNNPACK calls the provider on the thread that creates the
 * runtime (no thread pool is given while packing), which is the thread that bound the runtime's weights. */
#include <stdlib.h>

#include "common/error.h"
#include "writer/writer_internal.h"
#include "xpack.h"

xp_writer_session* xp_writer_session_get(xpack_writer* w) {
  xp_writer_session* s = pthread_getspecific(w->session_key);
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
  xp_writer_slot_enter(w, s); /* slot 0, outside any delegate, until it begins one */
  pthread_mutex_unlock(&w->lock);
  return s;
}

void xp_writer_sessions_destroy(xpack_writer* w) {
  while (w->sessions != NULL) {
    xp_writer_session* s = w->sessions;
    w->sessions = s->next;
    xp_bindings_destroy(&s->bindings);
    xp_bindings_destroy(&s->family_bindings);
    xp_pending_destroy(&s->pending);
    free(s);
  }
}

xpack_status xpack_writer_begin_delegate(xpack_writer* w, uint32_t delegate_index, xpack_error* err) {
  if (w == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_begin_delegate: the writer is NULL");
  xp_writer_session* s = xp_writer_session_get(w);
  if (s == NULL) {
    return xp_fail(err, XPACK_ERR_NOMEM, "xpack_writer_begin_delegate: out of memory for delegate %u's thread",
                   delegate_index);
  }
  xp_bindings_clear(&s->bindings);
  xp_bindings_clear(&s->family_bindings);
  pthread_mutex_lock(&w->lock); /* a key left in flight by a failed delegate: nobody waits for it any more */
  if (s->packing) {
    s->packing = 0;
    pthread_cond_broadcast(&w->packed);
  }
  xp_writer_slot_leave(w, s);
  s->ticket_base = ((uint64_t)delegate_index + 1) << WR_SLOT_SHIFT;
  s->events = 0;
  xp_writer_slot_enter(w, s);
  pthread_mutex_unlock(&w->lock);
  return XPACK_OK;
}

xpack_status xpack_writer_end_delegate(xpack_writer* w, xpack_error* err) {
  if (w == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_end_delegate: the writer is NULL");
  xp_writer_session* s = xp_writer_session_get(w);
  if (s == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "xpack_writer_end_delegate: out of memory for this thread");
  pthread_mutex_lock(&w->lock);
  /* A delegate whose runtime failed between a look-up and its insert: threads waiting for that key go on now
   * instead of after WR_WAIT_SECONDS. */
  xp_writer_packing_done(w, s);
  xp_writer_slot_leave(w, s);
  pthread_mutex_unlock(&w->lock);
  return XPACK_OK;
}

xpack_status xpack_writer_bind(xpack_writer* w, const void* raw, const char* identity, size_t identity_len,
                               xpack_error* err) {
  xpack_status st = xp_bind_check("xpack_writer_bind", w, "the writer", raw, identity, identity_len,
                                  err);
  xp_writer_session* s = w != NULL ? xp_writer_session_get(w) : NULL;
  if (st != XPACK_OK) { /* the pointer's earlier identity must not name what it points to now */
    if (s != NULL) xp_bindings_unbind(&s->bindings, raw);
    return st;
  }
  if (s == NULL || xp_bindings_set(&s->bindings, raw, identity, identity_len) != XPACK_OK) {
    return xp_fail(err, XPACK_ERR_NOMEM, "xpack_writer_bind: out of memory binding '%.*s'", (int)identity_len,
                   identity);
  }
  return XPACK_OK;
}

void xpack_writer_unbind_all(xpack_writer* w) {
  if (w == NULL) return;
  xp_writer_session* s = xp_writer_session_get(w);
  if (s == NULL) return;
  xp_bindings_clear(&s->bindings);
  xp_bindings_clear(&s->family_bindings);
}
