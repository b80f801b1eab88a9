/* The recording provider: the XNNPACK weights-cache callbacks through which `pack` sees every weight XNNPACK
 * packs. Each distinct byte string is stored once (found by its XXH3 and compared byte for byte), each key
 * XNNPACK asks under is remembered, and a weight packed by one session is not packed again by another. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xxhash.h>

#include "cachefile/cache_view.h"
#include "writer/writer_internal.h"

#define WR_COMPARE_CHUNK (1u << 20)

static int region_equals(xpack_writer* w, const xp_writer_region* r, const uint8_t* bytes, size_t size) {
  if (r->size != size) return 0;
  if (r->pending_bytes != NULL) return memcmp(r->pending_bytes, bytes, size) == 0; /* being written */
  uint8_t* buf = malloc(WR_COMPARE_CHUNK);
  if (buf == NULL) return 0;
  int same = 1;
  for (size_t done = 0; same && done < size;) {
    size_t n = size - done < WR_COMPARE_CHUNK ? size - done : WR_COMPARE_CHUNK;
    ssize_t k = pread(xp_writer_region_fd(w, r), buf, n, (off_t)(r->offset + done));
    if (k <= 0) {
      if (k < 0 && errno == EINTR) continue;
      same = 0;
      break;
    }
    same = memcmp(buf, bytes + done, (size_t)k) == 0;
    done += (size_t)k;
  }
  free(buf);
  return same;
}

/* Resolves the pointers of a key to identities in the calling thread's session; 0 when they are bound. */
static int resolve(xp_writer_session* s, const struct xnn_weights_cache_look_up_key* key, xp_key_identities* ids) {
  if (s == NULL) return -1;
  return xp_bindings_resolve_key(&s->bindings, key->seed, key->kernel, key->bias, ids);
}

static uint64_t key_hash_of(uint32_t seed, const xp_key_identities* ids) {
  return xp_key_hash(seed, ids->kernel, ids->kernel_len, ids->has_bias ? ids->bias : NULL, ids->bias_len);
}

/* The recorded entry for a key, or -1. Caller holds the lock. */
static long find_entry(xpack_writer* w, uint32_t seed, const xp_key_identities* ids, uint64_t h) {
  size_t cursor = 0;
  uint32_t idx;
  while (xp_writer_index_next(&w->entry_index, h, &cursor, &idx)) {
    const xp_writer_entry* e = &w->entries[idx];
    if (e->seed != seed) continue;
    const xp_writer_string* k = &w->strings[e->kernel];
    if (k->len != ids->kernel_len || memcmp(k->text, ids->kernel, k->len) != 0) continue;
    if (!ids->has_bias) {
      if (e->bias != XPC_NONE) continue;
    } else {
      if (e->bias == XPC_NONE) continue;
      const xp_writer_string* b = &w->strings[e->bias];
      if (b->len != ids->bias_len || memcmp(b->text, ids->bias, b->len) != 0) continue;
    }
    return (long)idx;
  }
  return -1;
}

/* The ticket of the session's next event: a look-up, or an insert that follows none. */
static uint64_t next_ticket(xp_writer_session* s) {
  return s == NULL ? UINT64_MAX - WR_TICKET_PARTS : s->ticket_base | (s->events++ * WR_TICKET_PARTS);
}

/* An event that found entry e: what it uses takes the event's ticket when smaller (its place in a serial
 * run, where the earliest delegate records it). Lock held. */
static void touch_entry(xpack_writer* w, long e, uint64_t ticket) {
  const xp_writer_entry* entry = &w->entries[e];
  xp_writer_region* r = &w->regions[entry->region];
  if (ticket < r->ticket) r->ticket = ticket;
  xp_writer_string* family = &w->strings[w->families[entry->family].name];
  if (ticket < family->ticket) family->ticket = ticket;
  xp_writer_string* kernel = &w->strings[entry->kernel];
  if (ticket + 1 < kernel->ticket) kernel->ticket = ticket + 1;
  if (entry->bias != XPC_NONE && ticket + 2 < w->strings[entry->bias].ticket) w->strings[entry->bias].ticket = ticket + 2;
}

/* Whether a thread other than s is packing the key with hash kh. Lock held. */
static int packing_elsewhere(const xpack_writer* w, const xp_writer_session* s, uint64_t kh) {
  for (const xp_writer_session* o = w->sessions; o != NULL; o = o->next) {
    if (o != s && o->packing && o->packing_key == kh) return 1;
  }
  return 0;
}

void xp_writer_packing_done(xpack_writer* w, xp_writer_session* s) {
  if (s != NULL && s->packing) {
    s->packing = 0;
    pthread_cond_broadcast(&w->packed);
  }
}

/* Parallel packing: when another thread is packing this very key, wait for its insert and answer from the
 * file instead of packing the weight a second time. A thread with a key of its own in flight never waits
 * (no cycle of waiters), and a wait gives up after 2 s (a thread whose XNNPACK call failed between look-up
 * and insert) and packs the weight itself: both outcomes give the same file. */
#define WR_WAIT_SECONDS 2

static size_t provider_look_up(void* context, const struct xnn_weights_cache_look_up_key* key) {
  xpack_writer* w = context;
  xp_writer_session* s = xp_writer_session_get(w);
  xp_key_identities ids;
  int bound = resolve(s, key, &ids) == 0;
  pthread_mutex_lock(&w->lock);
  const uint64_t ticket = next_ticket(s);
  w->stats.lookups++;
  size_t answer = SIZE_MAX;
  if (bound) {
    const uint64_t kh = key_hash_of(key->seed, &ids);
    struct timespec deadline = {0, 0};
    for (;;) {
      long e = find_entry(w, key->seed, &ids, kh);
      if (e >= 0) {
        touch_entry(w, e, ticket);
        w->stats.reused++;
        w->stats.reused_bytes += w->regions[w->entries[e].region].size;
        answer = WR_REGION_ID_BASE + w->entries[e].region;
        break;
      }
      if (s == NULL || s->packing || !packing_elsewhere(w, s, kh)) break;
      if (deadline.tv_sec == 0) {
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += WR_WAIT_SECONDS;
      }
      if (pthread_cond_timedwait(&w->packed, &w->lock, &deadline) != 0) break;
    }
    if (answer == SIZE_MAX && s != NULL) {
      s->packing = 1;
      s->packing_key = kh;
    }
  }
  if (answer == SIZE_MAX && s != NULL && xp_pending_add(&s->pending, key) != 0) {
    xp_writer_fail_nomem(w, "remembering a look-up");
  }
  pthread_mutex_unlock(&w->lock);
  return answer;
}

static void* provider_reserve_space(void* context, size_t n) {
  xpack_writer* w = context;
  return xp_heap_reserve(&w->heap, n);
}

/* The region holding exactly bytes[0, size) and stored by an earlier insert, or -1. Lock held. */
static long find_region(xpack_writer* w, const uint8_t* bytes, size_t size, uint64_t h64) {
  size_t cursor = 0;
  uint32_t idx;
  while (xp_writer_index_next(&w->region_index, h64, &cursor, &idx)) {
    if (w->regions[idx].size == size && region_equals(w, &w->regions[idx], bytes, size)) return (long)idx;
  }
  return -1;
}

/* The region for bytes: an identical stored one, or a new one whose place is reserved (*fresh = 1: the
 * caller writes it with xp_writer_write_reserved). Returns its index, or -1. Lock held. */
static long store_region(xpack_writer* w, const uint8_t* bytes, size_t size, uint64_t h64, uint64_t ticket,
                         int* fresh) {
  *fresh = 0;
  if (w->failed) return -1; /* nothing more is recorded after a failure: finish reports it */
  long found = find_region(w, bytes, size, h64);
  if (found >= 0) {
    if (ticket < w->regions[found].ticket) w->regions[found].ticket = ticket;
    return found;
  }
  if (xp_writer_reserve((void**)&w->regions, &w->region_cap, w->region_count + 1, sizeof *w->regions) != 0) return -1;
  const uint32_t idx = (uint32_t)w->region_count;
  if (xp_writer_index_put(&w->region_index, h64, idx) != 0) return -1;
  xp_writer_region* r = &w->regions[idx];
  *r = (xp_writer_region){.size = size, .hash64 = h64, .ticket = ticket};
  xp_writer_reserve_region(w, ticket >> WR_SLOT_SHIFT, r, bytes);
  w->region_count++;
  w->stats.regions++;
  w->stats.stored_bytes += size;
  *fresh = 1;
  return (long)idx;
}

/* Packed bytes that go into no file stay in heap memory, so the runtime being created still works. */
static size_t keep_in_heap(xpack_writer* w, void* ptr, size_t size) { return xp_heap_keep_bytes(&w->heap, ptr, size); }

static size_t provider_look_up_or_insert(void* context, const struct xnn_weights_cache_look_up_key* key, void* ptr,
                                         size_t size) {
  xpack_writer* w = context;
  if (ptr == NULL) return provider_look_up(context, key);
  xp_writer_session* s = xp_writer_session_get(w);
  xp_key_identities ids;
  int bound = resolve(s, key, &ids) == 0;
  /* Hash outside the lock: it is the only per-byte work besides the write. It is also the region's checksum
   * in the file; regions that share it are compared byte for byte before one stands for the other. */
  uint64_t h64 = XXH3_64bits(ptr, size);
  pthread_mutex_lock(&w->lock);
  xp_writer_packing_done(w, s);
  int after_look_up = s != NULL && xp_pending_take(&s->pending, key);
  /* XNNPACK inserts right after the look-up that missed, on the same thread: the look-up's event. */
  const uint64_t ticket = after_look_up ? s->ticket_base | ((s->events - 1) * WR_TICKET_PARTS) : next_ticket(s);
  w->stats.inserts++;
  size_t answer;
  if (!bound) {
    w->stats.unbound++;
    w->stats.unbound_bytes += size;
    answer = keep_in_heap(w, ptr, size);
    pthread_mutex_unlock(&w->lock);
    return answer;
  }
  uint64_t kh = key_hash_of(key->seed, &ids);
  long e = find_entry(w, key->seed, &ids, kh);
  if (e >= 0) { /* packed again (XNNPACK packs some operators without asking): must be the same bytes */
    touch_entry(w, e, ticket);
    xp_writer_region* r = &w->regions[w->entries[e].region];
    if (r->hash64 == h64 && region_equals(w, r, ptr, size)) {
      w->stats.reused++;
      w->stats.reused_bytes += r->size;
      answer = WR_REGION_ID_BASE + w->entries[e].region;
      xp_heap_release(&w->heap, ptr);
    } else {
      w->stats.nondeterministic++;
      answer = keep_in_heap(w, ptr, size);
    }
    pthread_mutex_unlock(&w->lock);
    return answer;
  }
  /* An entry the loader could not vouch for on another machine is not worth storing (writer_families.c). */
  w->intern_ticket = ticket;
  const uint32_t family = xp_writer_entry_family(w, s, key->kernel);
  if (family == XPC_NONE) {
    w->stats.no_family++;
    w->stats.no_family_bytes += size;
    answer = keep_in_heap(w, ptr, size);
    pthread_mutex_unlock(&w->lock);
    return answer;
  }
  int fresh;
  long region = store_region(w, ptr, size, h64, ticket, &fresh);
  w->intern_ticket = ticket + 1;
  uint32_t kernel = xp_writer_intern(w, ids.kernel, ids.kernel_len);
  w->intern_ticket = ticket + 2;
  uint32_t bias = ids.has_bias ? xp_writer_intern(w, ids.bias, ids.bias_len) : XPC_NONE;
  const int recorded = region >= 0 && kernel != XPC_NONE && (!ids.has_bias || bias != XPC_NONE) &&
                       xp_writer_reserve((void**)&w->entries, &w->entry_cap, w->entry_count + 1, sizeof *w->entries) == 0 &&
                       xp_writer_index_put(&w->entry_index, kh, (uint32_t)w->entry_count) == 0;
  if (recorded) {
    w->entries[w->entry_count++] = (xp_writer_entry){kh, key->seed, kernel, bias, (uint32_t)region, family,
                                              after_look_up ? 0u : XPC_ENTRY_PACKED_ON_INSERT};
    w->stats.entries++;
    w->stats.packed_bytes += size;
  } else {
    xp_writer_fail_nomem(w, "while recording a packed weight"); /* keeps an earlier failure */
  }
  /* The entry is visible before its bytes are written: the write drops the lock, so threads packing other
   * delegates go on meanwhile. Until it is done the region's bytes are read from ptr (region_equals). */
  if (fresh) xp_writer_write_reserved(w, (uint32_t)region);
  if (recorded) {
    answer = WR_REGION_ID_BASE + (size_t)region;
    xp_heap_release(&w->heap, ptr);
  } else {
    answer = keep_in_heap(w, ptr, size);
  }
  pthread_mutex_unlock(&w->lock);
  return answer;
}

static bool provider_is_finalized(void* context) { return true; }

/* XNNPACK reads packed weights only when a runtime is set up; pack never does that, but a caller may.
 * Regions are mapped read-only on first use, from where they are then (the spool or the temporary file);
 * a mapping stays valid when the region moves on. */
static void* provider_offset_to_addr(void* context, size_t offset) {
  xpack_writer* w = context;
  if (offset >= WR_HEAP_OFFSET_BASE) return xp_heap_addr(&w->heap, offset);
  if (offset < WR_REGION_ID_BASE) return NULL;
  void* addr = NULL;
  pthread_mutex_lock(&w->lock);
  if (offset - WR_REGION_ID_BASE < w->region_count) {
    while (w->regions[offset - WR_REGION_ID_BASE].io_busy) pthread_cond_wait(&w->io_done, &w->lock);
    xp_writer_region* r = &w->regions[offset - WR_REGION_ID_BASE];
    if (r->map == NULL) {
      long page = sysconf(_SC_PAGESIZE);
      size_t skew = (size_t)(r->offset % (uint64_t)page);
      void* m = mmap(NULL, (size_t)r->size + skew, PROT_READ, MAP_SHARED, xp_writer_region_fd(w, r), (off_t)(r->offset - skew));
      if (m != MAP_FAILED) {
        r->map = m;
        r->map_len = (size_t)r->size + skew;
        r->map_skew = skew;
      }
    }
    if (r->map != NULL) addr = (uint8_t*)r->map + r->map_skew;
  }
  pthread_mutex_unlock(&w->lock);
  return addr;
}

static enum xnn_status provider_delete_cache(void* context) { return xnn_status_success; }

void xp_writer_provider_init(xpack_writer* w) {
  w->provider = (struct xnn_weights_cache_provider){
      .context = w,
      .look_up = provider_look_up,
      .reserve_space = provider_reserve_space,
      .look_up_or_insert = provider_look_up_or_insert,
      .is_finalized = provider_is_finalized,
      .offset_to_addr = provider_offset_to_addr,
      .delete_cache = provider_delete_cache,
  };
}
