/* State shared by the recording provider (writer.c) and the file finisher (writer_meta.c). */
#ifndef XPACK_SRC_WRITER_INTERNAL_H
#define XPACK_SRC_WRITER_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "cachefile/region_place.h"
#include "common/safe_write.h"
#include "loader/bindings.h"
#include "loader/heap_pool.h"
#include "loader/pending_keys.h"
#include "xpack.h"

typedef struct xp_writer_region {
  uint64_t offset, size;
  uint64_t hash64; /* XXH3-64 of the bytes */
  void* map; /* lazily made read-only mapping for offset_to_addr, or NULL */
  size_t map_len;
  size_t map_skew; /* offset - page-aligned start of map */
  uint64_t ticket; /* smallest ticket of a look-up or insert that used it: its place in the file */
  uint32_t next_spooled; /* the next region spooled for the same slot, or XPC_NONE */
  uint8_t in_spool;      /* offset is in the spool file, not yet in the temporary file */
  uint8_t io_busy;              /* its bytes are being written, with the lock dropped */
  const uint8_t* pending_bytes; /* meanwhile, where its bytes are in memory */
  uint64_t move_to;             /* a spooled region's place in the temporary file, once given one */
} xp_writer_region;

/* A delegate slot: 0 for events outside any delegate, delegate index + 1 otherwise (a ticket's bits from
 * 40 up). Regions are written to the temporary file in slot order; those of a slot that cannot be placed
 * yet wait in the spool file (writer_layout.c). */
typedef struct xp_writer_slot {
  uint32_t users;                       /* sessions replaying this delegate now */
  uint8_t begun;                        /* some session began it */
  uint32_t first_spooled, last_spooled; /* its regions waiting in the spool, in arrival order, or XPC_NONE */
} xp_writer_slot;

typedef struct xp_writer_entry {
  uint64_t key_hash;
  uint32_t seed;
  uint32_t kernel; /* string index */
  uint32_t bias;   /* string index or XPC_NONE */
  uint32_t region;
  uint32_t family; /* index into families */
  uint32_t flags;
} xp_writer_entry;

typedef struct xp_writer_family {
  uint32_t name; /* string index */
  uint64_t probe_hash;
  uint64_t probe_keys;
} xp_writer_family;

typedef struct xp_writer_string {
  char* text;
  uint32_t len;
  uint64_t hash;
  uint64_t ticket; /* as xp_writer_region's: strings are laid out in ticket order */
} xp_writer_string;

typedef struct xp_writer_input {
  uint32_t name; /* string index */
  uint32_t kind;
  uint64_t file_size, file_hash, program_size, program_hash;
} xp_writer_input;

/* Open-addressing index from a 64-bit hash to an array position (value + 1; 0 = empty). */
/* What one thread binds while it creates runtimes (writer_sessions.c). Runtimes created at the same time
 * on several threads each see only their own thread's bindings, so delegates packed in parallel never see
 * each other's pointers. Tickets order what each look-up and insert touches: (delegate << 40 | event << 2 |
 * part), the same whichever thread gets there first, so the file does not depend on arrival order. */
typedef struct xp_writer_session {
  struct xp_writer_session* next; /* the writer's list, freed with the writer */
  xp_bindings bindings;
  xp_bindings family_bindings; /* kernel pointer -> family name, or a WR_NO_FAMILY_* marker */
  xp_pending_keys pending;
  uint64_t ticket_base; /* (delegate + 1) << 40, or 0 before xpack_writer_begin_delegate */
  uint64_t events;      /* look-ups and inserts without a look-up, so far in this delegate */
  int packing;          /* this thread missed a look-up and XNNPACK is packing that key (parallel packing:
                           another thread asking for the same key waits instead of packing it again) */
  uint64_t packing_key; /* its key hash */
  int in_slot;          /* counted among the users of its slot (ticket_base's, writer_layout.c) */
} xp_writer_session;

#define WR_SLOT_SHIFT 40 /* a ticket's bits from here up are its delegate slot (xp_writer_slot) */
#define WR_TICKET_PARTS 4 /* within one event: 0 family name, 1 kernel, 2 bias */

typedef struct xp_writer_index {
  uint64_t* hashes;
  uint32_t* values;
  size_t capacity, count;
} xp_writer_index;

struct xpack_writer {
  struct xnn_weights_cache_provider provider;
  pthread_mutex_t lock;
  pthread_cond_t packed;  /* a session's in-flight key was inserted (or given up) */
  pthread_cond_t io_done; /* a region's write or move finished */
  char* out_path;
  xp_safe_file file; /* the temporary file beside out_path that becomes the cache (common/safe_write.h), or the
                      * unnamed file of an unnamed writer (whose out_path is then its folder, for messages) */
  uint32_t page_alignment, region_alignment;
  uint64_t data_offset, data_end;
  unsigned long long written_behind; /* xp_write_behind's progress over the temporary file */
  pthread_key_t session_key;
  int has_session_key;
  xp_writer_session* sessions;
  size_t session_count;
  uint64_t intern_ticket;  /* ticket given to strings interned now; caller holds the lock */
  uint64_t outside_events; /* tickets of strings interned outside any delegate (inputs, info) */
  xp_heap_pool heap;
  xp_writer_slot* slots; size_t slot_cap;
  uint64_t head_slot; /* regions of this slot (and earlier ones) go straight into the temporary file */
  int spool_fd;       /* unnamed file beside the target, or -1 until needed */
  int spool_unusable; /* it could not be made: regions go straight in, out of order (put in order at the end) */
  uint64_t spool_end;
  xp_writer_region* regions; size_t region_count, region_cap;
  xp_writer_entry* entries; size_t entry_count, entry_cap;
  xp_writer_string* strings; size_t string_count, string_cap;
  xp_writer_input* inputs; size_t input_count, input_cap;
  uint32_t* info; size_t info_count, info_cap; /* pairs of string indices */
  xp_writer_family* families; size_t family_count, family_cap;
  xp_writer_index region_index; /* hash64 -> region */
  xp_writer_index entry_index;  /* key_hash -> entry */
  xp_writer_index string_index; /* string hash -> string */
  xpack_writer_stats stats;
  int failed; /* an I/O error or an allocation failed inside a provider callback; finish reports it */
  xpack_status failed_status; /* XPACK_ERR_IO or XPACK_ERR_NOMEM */
  char failure[256];
};

/* Grows *array (of elem bytes each) so that it holds at least need elements. */
int xp_writer_reserve(void** array, size_t* cap, size_t need, size_t elem);

int xp_writer_index_init(xp_writer_index* ix);
void xp_writer_index_free(xp_writer_index* ix);
/* Inserts hash -> value; several values may share a hash. */
int xp_writer_index_put(xp_writer_index* ix, uint64_t hash, uint32_t value);
/* Iterates the values stored under hash: start with *cursor = 0; returns 0 when done. */
int xp_writer_index_next(const xp_writer_index* ix, uint64_t hash, size_t* cursor, uint32_t* value);

/* The calling thread's session, made on first use; NULL on allocation failure (writer_sessions.c). */
xp_writer_session* xp_writer_session_get(xpack_writer* w);
/* Frees every session (writer destruction). */
void xp_writer_sessions_destroy(xpack_writer* w);

/* Records an I/O failure inside a provider callback; the first failure is kept for xpack_writer_finish. */
void xp_writer_fail(xpack_writer* w, const char* fmt, const char* detail);
/* Records an allocation that failed inside a provider callback (XPACK_ERR_NOMEM at finish): what could not be
 * recorded would be missing from the file, which a pack must not write. Lock held. */
void xp_writer_fail_nomem(xpack_writer* w, const char* what);

/* Ends s's in-flight key (a look-up that missed, whose insert has come or never will), waking the threads
 * waiting for it (recording_provider.c). Lock held. */
void xp_writer_packing_done(xpack_writer* w, xp_writer_session* s);

/* Fills w->provider with the recording provider's callbacks (recording_provider.c), whose context is w. */
void xp_writer_provider_init(xpack_writer* w);

/* The answer the provider gives XNNPACK for region i: an id, not an offset, because a region may move while
 * the writer runs (offset_to_addr resolves it). Below WR_HEAP_OFFSET_BASE, so the two never collide. */
#define WR_REGION_ID_BASE ((SIZE_MAX >> 3) + 1) /* 2^61 on 64-bit targets; a constant shift would be undefined on 32-bit ones */

/* The writer's heap pool numbers the blocks it keeps (XNNPACK's packings the writer does not record) from here:
 * a quarter of size_t's range, whatever its width (2^62 on 64-bit targets, 2^30 on 32-bit ones). A constant shift
 * by 62 is undefined where size_t has 32 bits, and compilers made it 0 there. */
#define WR_HEAP_OFFSET_BASE ((SIZE_MAX >> 2) + 1)

/* Where a region that starts no earlier than `end` is placed (cachefile/region_place.h). */
static inline uint64_t xp_writer_region_place(const xpack_writer* w, uint64_t end, uint64_t size) {
  return xp_place_region(end, size, w->page_alignment, w->region_alignment);
}

/* Region placement (writer_layout.c). Every function takes the lock held, and those that write or copy
 * drop it while they do: the caller must not keep pointers into the writer's arrays across them.
 * A session is in the slot of its ticket_base. xp_writer_slot_enter counts s among the users of that slot;
 * xp_writer_slot_leave takes it out again (before ticket_base changes), which may bring later slots' spooled
 * regions into the temporary file, copying them. Entering never does: it cannot end a slot. */
void xp_writer_slot_enter(xpack_writer* w, xp_writer_session* s);
void xp_writer_slot_leave(xpack_writer* w, xp_writer_session* s);
/* Gives r, the new region number region_count stored by a session in `slot`, its place: in the temporary
 * file when its slot's turn has come, else in the spool, where it waits for it. The caller then writes
 * `bytes` there with xp_writer_write_reserved; until that is done, they are what region_equals compares with. */
void xp_writer_reserve_region(xpack_writer* w, uint64_t slot, xp_writer_region* r, const uint8_t* bytes);
/* Writes region idx's bytes to their reserved place, dropping the lock meanwhile; a failure is recorded
 * with xp_writer_fail. */
void xp_writer_write_reserved(xpack_writer* w, uint32_t idx);
/* The descriptor that holds r's bytes at r->offset now. */
int xp_writer_region_fd(const xpack_writer* w, const xp_writer_region* r);
/* Moves every spooled region into the temporary file, in slot order, and closes the spool. Takes the lock
 * itself (no other thread may use the writer any more). Returns 0, or -1 after xp_writer_fail. */
int xp_writer_spool_drain_all(xpack_writer* w);
/* Closes the spool file, if any (its mapped regions stay readable). */
void xp_writer_spool_close(xpack_writer* w);

/* Lays regions out in ticket order when they arrived in another, copying them to a new temporary file,
 * and gives the strings' order for the string table (writer_order.c). Errors: XPACK_ERR_IO, NOMEM. */
xpack_status xp_writer_canonical_regions(xpack_writer* w, xpack_error* err);
/* Indices of the strings in ticket order (ties: index); caller frees. NULL on allocation failure. */
uint32_t* xp_writer_string_order(const xpack_writer* w);

/* Interns a string with ticket w->intern_ticket (an existing string keeps the smaller ticket); returns its
 * index or XPC_NONE on allocation failure. Caller holds the lock. */
uint32_t xp_writer_intern(xpack_writer* w, const char* s, size_t len);

/* The family index for an entry whose kernel pointer is `kernel` (writer_families.c), or XPC_NONE when
 * the pointer has no single known family: then the entry is not recorded. Caller holds the lock. */
uint32_t xp_writer_entry_family(xpack_writer* w, xp_writer_session* s, const void* kernel);

/* Writes metadata, footer and header into the temporary file, and the file's final size to *file_size
 * (writer_meta.c). */
xpack_status xp_writer_write_metadata(xpack_writer* w, uint64_t* file_size, xpack_error* err);

/* A writer of the file at out_path (xpack_writer_create), or with unnamed_folder of an unnamed file there
 * whose messages name out_path (xpack_writer_create_unnamed). */
xpack_status xp_writer_create(const char* out_path, const char* unnamed_folder, const xpack_writer_options* options,
                              xpack_writer** out, xpack_error* err);

/* Finishes the file and frees w in every case: with kept_fd NULL commits it to out_path (xpack_writer_finish),
 * else hands the unnamed file's descriptor to *kept_fd (xpack_writer_finish_fd). */
xpack_status xp_writer_finish(xpack_writer* w, int* kept_fd, xpack_error* err);

#endif
