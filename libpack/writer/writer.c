/* The recording weights cache: an XNNPACK provider that streams every packed weight to a temporary file,
 * stored once per distinct byte string, and remembers under which key XNNPACK asked for it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xxhash.h>

#include "cachefile/cache_view.h"
#include "common/error.h"
#include "common/target.h"
#include "writer/writer_internal.h"
#include "xpc_format.h"

#define WR_COMPARE_CHUNK (1u << 20)

void xp_writer_fail(xpack_writer* w, const char* fmt, const char* detail) {
  if (!w->failed) {
    w->failed = 1;
    snprintf(w->failure, sizeof w->failure, fmt, detail);
  }
}

/* Whether the stored region holds exactly bytes[0, size). Reads the file that holds it back in chunks, or
 * compares with the bytes still being written. Lock held. */
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

/* Ends s's in-flight key, waking threads waiting for it. Lock held. */
static void packing_done(xpack_writer* w, xp_writer_session* s) {
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
  if (answer == SIZE_MAX && s != NULL) xp_pending_add(&s->pending, key);
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
  packing_done(w, s);
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
    xp_writer_fail(w, "%s", w->failed ? w->failure : "out of memory while recording a packed weight");
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
  if (offset >= XP_HEAP_OFFSET_BASE) return xp_heap_addr(&w->heap, offset);
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

xpack_status xp_writer_create(const char* out_path, const char* unnamed_folder, const xpack_writer_options* options,
                              xpack_writer** out, xpack_error* err) {
  *out = NULL;
  uint32_t page = options && options->page_alignment ? options->page_alignment : XPC_DEFAULT_PAGE_ALIGNMENT;
  if (page < 4096 || page > XPC_MAX_PAGE_ALIGNMENT || (page & (page - 1)) != 0) {
    return xp_fail(err, XPACK_ERR_ARG, "page alignment %u must be a power of two from 4096 to %u", page,
                   (unsigned)XPC_MAX_PAGE_ALIGNMENT);
  }
  xpack_writer* w = calloc(1, sizeof *w);
  if (w == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
  w->file.fd = -1;
  w->spool_fd = -1;
  w->out_path = strdup(out_path);
  if (!w->out_path || xp_writer_index_init(&w->region_index) || xp_writer_index_init(&w->entry_index) ||
      xp_writer_index_init(&w->string_index)) {
    xpack_writer_abort(w);
    return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
  }
  /* Locked while we write; leftovers of killed writers in this folder are removed (temp_files.h). */
  xpack_status st = unnamed_folder == NULL ? xp_safe_create(&w->file, out_path, err)
                             : xp_safe_create_unnamed(&w->file, unnamed_folder, out_path, err);
  if (st != XPACK_OK) {
    xpack_writer_abort(w);
    return st;
  }
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->packed, NULL);
  pthread_cond_init(&w->io_done, NULL);
  if (pthread_key_create(&w->session_key, NULL) != 0) {
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->packed);
    pthread_cond_destroy(&w->io_done);
    xpack_writer_abort(w);
    return xp_fail(err, XPACK_ERR_NOMEM, "no thread-specific key left for the writer's sessions");
  }
  w->has_session_key = 1;
  xp_heap_init(&w->heap, xp_target_xnn_alignment());
  w->page_alignment = page;
  w->region_alignment = (uint32_t)xp_small_region_alignment(xp_target_xnn_alignment());
  w->data_offset = page; /* the first page holds only the header */
  w->data_end = w->data_offset;
  w->provider = (struct xnn_weights_cache_provider){
      .context = w,
      .look_up = provider_look_up,
      .reserve_space = provider_reserve_space,
      .look_up_or_insert = provider_look_up_or_insert,
      .is_finalized = provider_is_finalized,
      .offset_to_addr = provider_offset_to_addr,
      .delete_cache = provider_delete_cache,
  };
  *out = w;
  return XPACK_OK;
}

struct xnn_weights_cache_provider* xpack_writer_provider(xpack_writer* w) { return w ? &w->provider : NULL; }

/* The public kinds are the on-disk PROV kinds (xpack.h restates xpc_format.h, which is not installed). */
_Static_assert(XPACK_INPUT_PTE == XPC_INPUT_PTE && XPACK_INPUT_PTD == XPC_INPUT_PTD &&
               XPACK_INPUT_OTHER == XPC_INPUT_OTHER,
               "xpack.h's XPACK_INPUT_* must be format/xpc_format.h's XPC_INPUT_*");

xpack_status xpack_writer_add_input(xpack_writer* w, const char* name, uint32_t kind, uint64_t file_size,
                                    uint64_t file_hash, uint64_t program_size, uint64_t program_hash,
                                    xpack_error* err) {
  if (w == NULL || name == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_add_input: %s is NULL", w == NULL ? "the writer" : "the name");
  }
  if (kind < XPC_INPUT_PTE || kind > XPC_INPUT_OTHER) {
    return xp_fail(err, XPACK_ERR_ARG,
                   "xpack_writer_add_input: %s: kind %u (expected XPACK_INPUT_PTE, _PTD or _OTHER)", name, kind);
  }
  pthread_mutex_lock(&w->lock);
  xpack_status st = XPACK_ERR_NOMEM;
  w->intern_ticket = w->outside_events++;
  uint32_t s = xp_writer_intern(w, name, strlen(name));
  if (s != XPC_NONE &&
      xp_writer_reserve((void**)&w->inputs, &w->input_cap, w->input_count + 1, sizeof *w->inputs) == 0) {
    w->inputs[w->input_count++] = (xp_writer_input){s, kind, file_size, file_hash, program_size, program_hash};
    st = XPACK_OK;
  }
  pthread_mutex_unlock(&w->lock);
  if (st != XPACK_OK) return xp_fail(err, st, "xpack_writer_add_input: out of memory recording input %s", name);
  return XPACK_OK;
}

xpack_status xpack_writer_add_info(xpack_writer* w, const char* key, const char* value, xpack_error* err) {
  if (w == NULL || key == NULL || value == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_add_info: %s is NULL",
                   w == NULL ? "the writer" : key == NULL ? "the key" : "the value");
  }
  pthread_mutex_lock(&w->lock);
  xpack_status st = XPACK_ERR_NOMEM;
  w->intern_ticket = w->outside_events++;
  uint32_t k = xp_writer_intern(w, key, strlen(key));
  w->intern_ticket = w->outside_events++;
  uint32_t v = xp_writer_intern(w, value, strlen(value));
  if (k != XPC_NONE && v != XPC_NONE &&
      xp_writer_reserve((void**)&w->info, &w->info_cap, 2 * (w->info_count + 1), sizeof *w->info) == 0) {
    w->info[2 * w->info_count] = k;
    w->info[2 * w->info_count + 1] = v;
    w->info_count++;
    st = XPACK_OK;
  }
  pthread_mutex_unlock(&w->lock);
  if (st != XPACK_OK) return xp_fail(err, st, "xpack_writer_add_info: out of memory recording '%s'", key);
  return XPACK_OK;
}

void xpack_writer_stats_get(xpack_writer* w, xpack_writer_stats* out) {
  if (out == NULL) return;
  if (w == NULL) {
    memset(out, 0, sizeof *out);
    return;
  }
  pthread_mutex_lock(&w->lock);
  *out = w->stats;
  pthread_mutex_unlock(&w->lock);
}

xpack_status xpack_writer_check(xpack_writer* w, xpack_error* err) {
  if (w == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_check: NULL writer");
  pthread_mutex_lock(&w->lock);
  xpack_status st = w->failed ? xp_fail(err, XPACK_ERR_IO, "%s: %s", w->out_path, w->failure) : XPACK_OK;
  pthread_mutex_unlock(&w->lock);
  return st;
}

static void destroy(xpack_writer* w) {
  for (size_t i = 0; i < w->region_count; i++) {
    if (w->regions[i].map) munmap(w->regions[i].map, w->regions[i].map_len);
  }
  for (size_t i = 0; i < w->string_count; i++) free(w->strings[i].text);
  xp_safe_abort(&w->file); /* nothing left to remove once committed */
  xp_writer_spool_close(w);
  if (w->has_session_key) {
    xp_writer_sessions_destroy(w);
    pthread_key_delete(w->session_key);
  }
  if (w->provider.context != NULL) {
    xp_heap_destroy(&w->heap);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->packed);
    pthread_cond_destroy(&w->io_done);
  }
  xp_writer_index_free(&w->region_index);
  xp_writer_index_free(&w->entry_index);
  xp_writer_index_free(&w->string_index);
  free(w->slots);
  free(w->regions);
  free(w->entries);
  free(w->strings);
  free(w->inputs);
  free(w->info);
  free(w->families);
  free(w->out_path);
  free(w);
}

void xpack_writer_abort(xpack_writer* w) {
  if (w == NULL) return;
  destroy(w); /* removes the temporary file */
}

xpack_status xpack_writer_create(const char* out_path, const xpack_writer_options* options, xpack_writer** out,
                                 xpack_error* err) {
  if (out_path == NULL || out == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_create: NULL argument");
  return xp_writer_create(out_path, NULL, options, out, err);
}

xpack_status xp_writer_finish(xpack_writer* w, int* kept_fd, xpack_error* err) {
  if (w->failed) {
    xpack_status st = xp_fail(err, XPACK_ERR_IO, "%s: %s", w->out_path, w->failure);
    xpack_writer_abort(w);
    return st;
  }
  uint64_t file_size = 0;
  xpack_status st = xp_writer_canonical_regions(w, err);
  if (st == XPACK_OK) st = xp_writer_write_metadata(w, &file_size, err);
  if (st == XPACK_OK) {
    st = kept_fd ? xp_safe_keep(&w->file, file_size, kept_fd, err) : xp_safe_commit(&w->file, file_size, err);
  }
  destroy(w); /* removes the temporary file when the commit did not happen */
  return st;
}

xpack_status xpack_writer_finish(xpack_writer* w, xpack_error* err) {
  if (w == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_finish: NULL writer");
  if (w->file.unnamed) {
    xpack_writer_abort(w);
    return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_finish: an unnamed writer: use xpack_writer_finish_fd");
  }
  return xp_writer_finish(w, NULL, err);
}
