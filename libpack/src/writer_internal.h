/* State shared by the recording provider (writer.c) and the file finisher (writer_meta.c). */
#ifndef XPACK_SRC_WRITER_INTERNAL_H
#define XPACK_SRC_WRITER_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "bindings.h"
#include "heap_pool.h"
#include "pending_keys.h"
#include "xpack.h"

#define WR_MAX_IDENTITY 1024

typedef struct wr_region {
  uint64_t offset, size;
  uint64_t hash64;
  uint64_t hash128_lo, hash128_hi;
  void* map; /* lazily made read-only mapping for offset_to_addr, or NULL */
  size_t map_len;
  size_t map_skew; /* offset - page-aligned start of map */
  uint64_t ticket; /* smallest ticket of a look-up or insert that used it: its place in the file */
} wr_region;

typedef struct wr_entry {
  uint64_t key_hash;
  uint32_t seed;
  uint32_t kernel; /* string index */
  uint32_t bias;   /* string index or XPC_NONE */
  uint32_t region;
  uint32_t family; /* index into families */
  uint32_t flags;
} wr_entry;

typedef struct wr_family {
  uint32_t name; /* string index */
  uint64_t probe_hash;
} wr_family;

typedef struct wr_string {
  char* text;
  uint32_t len;
  uint64_t hash;
  uint64_t ticket; /* as wr_region's: strings are laid out in ticket order */
} wr_string;

typedef struct wr_input {
  uint32_t name; /* string index */
  uint32_t kind;
  uint64_t file_size, file_hash, program_size, program_hash;
} wr_input;

/* Open-addressing index from a 64-bit hash to an array position (value + 1; 0 = empty). */
/* What one thread binds while it creates runtimes (writer_sessions.c). Runtimes created at the same time
 * on several threads each see only their own thread's bindings, so delegates packed in parallel never see
 * each other's pointers. Tickets order what each look-up and insert touches: (delegate << 40 | event << 2 |
 * part), the same whichever thread gets there first, so the file does not depend on arrival order. */
typedef struct wr_session {
  struct wr_session* next; /* the writer's list, freed with the writer */
  xp_bindings bindings;
  xp_bindings family_bindings; /* kernel pointer -> family name, or a WR_NO_FAMILY_* marker */
  xp_pending_keys pending;
  uint64_t ticket_base; /* (delegate + 1) << 40, or 0 before xpack_writer_begin_delegate */
  uint64_t events;      /* look-ups and inserts without a look-up, so far in this delegate */
  int packing;          /* this thread missed a look-up and XNNPACK is packing that key (parallel packing:
                           another thread asking for the same key waits instead of packing it again) */
  uint64_t packing_key; /* its key hash */
} wr_session;

#define WR_TICKET_PARTS 4 /* within one event: 0 family name, 1 kernel, 2 bias */

typedef struct wr_index {
  uint64_t* hashes;
  uint32_t* values;
  size_t capacity, count;
} wr_index;

struct xpack_writer {
  struct xnn_weights_cache_provider provider;
  pthread_mutex_t lock;
  pthread_cond_t packed; /* a session's in-flight key was inserted (or given up) */
  char* out_path;
  char* tmp_path;
  int fd;
  uint32_t page_alignment, region_alignment;
  uint64_t data_offset, data_end;
  unsigned long long written_behind; /* xp_write_behind's progress over the temporary file */
  pthread_key_t session_key;
  int has_session_key;
  wr_session* sessions;
  size_t session_count;
  uint64_t intern_ticket;  /* ticket given to strings interned now; caller holds the lock */
  uint64_t outside_events; /* tickets of strings interned outside any delegate (inputs, info) */
  xp_heap_pool heap;
  wr_region* regions; size_t region_count, region_cap;
  wr_entry* entries; size_t entry_count, entry_cap;
  wr_string* strings; size_t string_count, string_cap;
  wr_input* inputs; size_t input_count, input_cap;
  uint32_t* info; size_t info_count, info_cap; /* pairs of string indices */
  wr_family* families; size_t family_count, family_cap;
  wr_index region_index; /* hash128_lo -> region */
  wr_index entry_index;  /* key_hash -> entry */
  wr_index string_index; /* string hash -> string */
  xpack_writer_stats stats;
  int failed; /* an I/O error happened inside a provider callback; finish reports it */
  char failure[256];
};

/* Grows *array (of elem bytes each) so that it holds at least need elements. */
int wr_reserve(void** array, size_t* cap, size_t need, size_t elem);

int wr_index_init(wr_index* ix);
void wr_index_free(wr_index* ix);
/* Inserts hash -> value; several values may share a hash. */
int wr_index_put(wr_index* ix, uint64_t hash, uint32_t value);
/* Iterates the values stored under hash: start with *cursor = 0; returns 0 when done. */
int wr_index_next(const wr_index* ix, uint64_t hash, size_t* cursor, uint32_t* value);

/* The calling thread's session, made on first use; NULL on allocation failure (writer_sessions.c). */
wr_session* wr_session_get(xpack_writer* w);
/* Frees every session (writer destruction). */
void wr_sessions_destroy(xpack_writer* w);

/* Lays regions out in ticket order when they arrived in another, copying them to a new temporary file,
 * and gives the strings' order for the string table (writer_order.c). Errors: XPACK_ERR_IO, NOMEM. */
xpack_status wr_canonical_regions(xpack_writer* w, xpack_error* err);
/* Indices of the strings in ticket order (ties: index); caller frees. NULL on allocation failure. */
uint32_t* wr_string_order(const xpack_writer* w);

/* Interns a string with ticket w->intern_ticket (an existing string keeps the smaller ticket); returns its
 * index or XPC_NONE on allocation failure. Caller holds the lock. */
uint32_t wr_intern(xpack_writer* w, const char* s, size_t len);

/* The family index for an entry whose kernel pointer is `kernel` (writer_families.c), or XPC_NONE when
 * the pointer has no single known family: then the entry is not recorded. Caller holds the lock. */
uint32_t wr_entry_family(xpack_writer* w, wr_session* s, const void* kernel);

/* Writes metadata, footer and header, fsyncs and renames (writer_meta.c). */
xpack_status wr_write_metadata(xpack_writer* w, xpack_error* err);

#endif
