/* Where a recorded region's bytes go while delegates are packed in parallel.
 *
 * The file lays regions out as a serial run would: by delegate slot, then in the order the slot stored
 * them. With one packing thread that is arrival order, and every region is written once, at its final
 * offset. With several, the delegates of later slots finish at any time; the slot at the head, the
 * earliest one not ended, writes straight into the temporary file, and the regions of later slots wait
 * until every earlier slot has ended, in a spool: an unnamed file beside the target, from which they are
 * copied in the kernel (copy_file_range) and punched out. Spooled pages are usually dropped before the
 * kernel ever writes them back, so a spooled region costs one page-cache copy more, not one disk write
 * more. (Holding them in memory instead, in the blocks XNNPACK packed them into, measured no faster:
 * fresh blocks fault in what the copy saves, and peak RSS grows by what waits.)
 *
 * What this cannot foresee (a later slot storing a region an earlier slot then uses; a session that never
 * ends its slot) leaves regions out of ticket order, and writer_order.c copies the file once at the end. */
#ifdef __linux__
#define _GNU_SOURCE /* fallocate */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file_io.h"
#include "common/temp_files.h"
#include "writer/writer_internal.h"
#include "xpc_format.h"

/* Slots tracked at most; regions of later ones go straight in (and are put in order at the end). */
#define WR_MAX_SLOTS ((uint64_t)1 << 20)
#define WR_SPOOL_ALIGNMENT 4096u /* whole pages, so a punched region frees its page cache */

/* The slot's record, grown on demand; NULL when it is not tracked. */
static xp_writer_slot* slot_at(xpack_writer* w, uint64_t slot) {
  if (slot >= WR_MAX_SLOTS) return NULL;
  if (slot >= w->slot_cap) {
    size_t cap = w->slot_cap ? w->slot_cap : 16;
    while (cap <= slot) cap *= 2;
    xp_writer_slot* grown = realloc(w->slots, cap * sizeof *grown);
    if (grown == NULL) return NULL;
    for (size_t i = w->slot_cap; i < cap; i++) grown[i] = (xp_writer_slot){0, 0, XPC_NONE, XPC_NONE};
    w->slots = grown;
    w->slot_cap = cap;
  }
  return &w->slots[slot];
}

int xp_writer_region_fd(const xpack_writer* w, const xp_writer_region* r) { return r->in_spool ? w->spool_fd : w->file.fd; }

static int spool_open(xpack_writer* w) {
  if (w->spool_fd >= 0) return 0;
  if (w->spool_unusable) return -1;
  w->spool_fd = xp_temp_open_unnamed(w->file.folder); /* nothing to clean up, however we end */
  if (w->spool_fd < 0) w->spool_unusable = 1; /* then regions go straight in, and are put in order at the end */
  return w->spool_fd >= 0 ? 0 : -1;
}

/* Appends region idx to its slot's list of waiting regions. */
static void link_waiting(xpack_writer* w, xp_writer_slot* sl, uint32_t idx) {
  if (sl->last_spooled == XPC_NONE) {
    sl->first_spooled = idx;
  } else {
    w->regions[sl->last_spooled].next_spooled = idx;
  }
  sl->last_spooled = idx;
}

void xp_writer_reserve_region(xpack_writer* w, uint64_t slot, xp_writer_region* r, const uint8_t* bytes) {
  const uint32_t idx = (uint32_t)(r - w->regions);
  r->next_spooled = XPC_NONE;
  r->pending_bytes = bytes;
  r->io_busy = 1;
  xp_writer_slot* sl = slot > w->head_slot ? slot_at(w, slot) : NULL;
  if (sl != NULL && spool_open(w) == 0) {
    r->offset = (w->spool_end + WR_SPOOL_ALIGNMENT - 1) & ~(uint64_t)(WR_SPOOL_ALIGNMENT - 1);
    r->in_spool = 1;
    w->spool_end = r->offset + r->size;
    link_waiting(w, sl, idx);
    return;
  }
  r->offset = xp_writer_region_place(w, w->data_end, r->size);
  r->in_spool = 0;
  w->data_end = r->offset + r->size;
}

void xp_writer_write_reserved(xpack_writer* w, uint32_t idx) {
  const xp_writer_region copy = w->regions[idx];
  const int fd = xp_writer_region_fd(w, &copy);
  pthread_mutex_unlock(&w->lock);
  const int rc = xp_write_at(fd, copy.pending_bytes, copy.size, copy.offset);
  const int e = errno;
  pthread_mutex_lock(&w->lock);
  if (rc != 0) xp_writer_fail(w, copy.in_spool ? "cannot write the spool file: %s" : "cannot write the temporary file: %s",
                              strerror(e));
  w->regions[idx].pending_bytes = NULL;
  w->regions[idx].io_busy = 0;
  if (!copy.in_spool) xp_write_behind(w->file.fd, &w->written_behind, w->data_end);
  pthread_cond_broadcast(&w->io_done);
}

/* Gives each spooled region of the slot its place at the end of the temporary file, in the order they were
 * stored, and adds them to the list of moves *moves (linked through next_spooled) that the caller copies. */
static void reserve_moves(xpack_writer* w, xp_writer_slot* sl, uint32_t* moves_first, uint32_t* moves_last) {
  for (uint32_t i = sl->first_spooled; i != XPC_NONE; i = w->regions[i].next_spooled) {
    xp_writer_region* r = &w->regions[i];
    r->move_to = xp_writer_region_place(w, w->data_end, r->size);
    w->data_end = r->move_to + r->size;
  }
  if (sl->first_spooled != XPC_NONE) {
    if (*moves_last == XPC_NONE) {
      *moves_first = sl->first_spooled;
    } else {
      w->regions[*moves_last].next_spooled = sl->first_spooled;
    }
    *moves_last = sl->last_spooled;
  }
  sl->first_spooled = sl->last_spooled = XPC_NONE;
}

/* Copies the moves from the spool into their places, with the lock dropped for each copy, and punches them
 * out of the spool. A region still being written into the spool is waited for. */
static void perform_moves(xpack_writer* w, uint32_t first) {
  if (first == XPC_NONE) return;
  for (uint32_t i = first; i != XPC_NONE;) {
    while (w->regions[i].io_busy) pthread_cond_wait(&w->io_done, &w->lock);
    const xp_writer_region copy = w->regions[i];
    int rc = -1, e = EIO;
    if (!w->failed) {
      pthread_mutex_unlock(&w->lock);
      rc = xp_copy_range(w->spool_fd, copy.offset, w->file.fd, copy.move_to, copy.size);
      e = errno;
      pthread_mutex_lock(&w->lock);
      if (rc != 0) xp_writer_fail(w, "cannot copy packed weights into the temporary file: %s", strerror(e));
    }
    xp_writer_region* r = &w->regions[i];
    const int punch = rc == 0 && r->map == NULL; /* a mapped region keeps its spool bytes: the mapping reads them */
    if (rc == 0) {
      r->offset = r->move_to;
      r->in_spool = 0;
    }
    i = r->next_spooled;
    r->next_spooled = XPC_NONE;
    xp_write_behind(w->file.fd, &w->written_behind, w->data_end);
#if defined(__linux__) && defined(FALLOC_FL_PUNCH_HOLE)
    /* The spool's pages are freed, usually before the kernel ever wrote them back. */
    if (punch) {
      const uint64_t len = (copy.size + WR_SPOOL_ALIGNMENT - 1) & ~(uint64_t)(WR_SPOOL_ALIGNMENT - 1);
      (void)fallocate(w->spool_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)copy.offset, (off_t)len);
    }
#else
    (void)punch;
#endif
  }
  pthread_cond_broadcast(&w->io_done);
}

/* Moves the head past every slot that has ended, bringing in what the next ones spooled. Slot 0 (outside
 * any delegate) counts as ended once nobody is in it; a later slot only after some session began it. */
static void advance_head(xpack_writer* w) {
  uint32_t first = XPC_NONE, last = XPC_NONE;
  for (;;) {
    const xp_writer_slot* head = w->head_slot < w->slot_cap ? &w->slots[w->head_slot] : NULL;
    if (head == NULL || head->users != 0 || (w->head_slot != 0 && !head->begun)) break;
    xp_writer_slot* next = slot_at(w, w->head_slot + 1);
    if (next == NULL) break;
    w->head_slot++;
    reserve_moves(w, next, &first, &last);
  }
  perform_moves(w, first);
}

void xp_writer_slot_leave(xpack_writer* w, xp_writer_session* s) {
  if (!s->in_slot) return;
  s->in_slot = 0;
  const uint64_t slot = s->ticket_base >> WR_SLOT_SHIFT;
  if (slot < w->slot_cap && w->slots[slot].users > 0) w->slots[slot].users--;
  advance_head(w);
}

void xp_writer_slot_enter(xpack_writer* w, xp_writer_session* s) {
  xp_writer_slot* sl = slot_at(w, s->ticket_base >> WR_SLOT_SHIFT);
  if (sl != NULL) {
    sl->users++;
    sl->begun = 1;
    s->in_slot = 1;
  }
}

int xp_writer_spool_drain_all(xpack_writer* w) {
  pthread_mutex_lock(&w->lock);
  uint32_t first = XPC_NONE, last = XPC_NONE;
  for (size_t slot = 0; slot < w->slot_cap; slot++) reserve_moves(w, &w->slots[slot], &first, &last);
  perform_moves(w, first);
  xp_writer_spool_close(w);
  const int failed = w->failed;
  pthread_mutex_unlock(&w->lock);
  return failed ? -1 : 0;
}

void xp_writer_spool_close(xpack_writer* w) {
  if (w->spool_fd >= 0) close(w->spool_fd);
  w->spool_fd = -1;
}
