/* The steps of opening a cache that its two ways share: xpack_cache_open_limits (loader.c: a file by its path)
 * and xpack_cache_open_fd (open_fd.c: bytes inside another file open as a descriptor). Each way finds the
 * bytes, maps or reads them into c->base; these decide the rest. */
#ifndef XPACK_SRC_OPEN_STEPS_H
#define XPACK_SRC_OPEN_STEPS_H

#include <stdint.h>

#include "loader/cache_state.h"
#include "loader/residency.h"
#include "xpack_loader.h"

/* The sizes XPACK_OPEN_SKIP_SMALL and XPACK_OPEN_SKIP_COLD compare with, defaults filled in. */
typedef struct xp_open_limits_resolved {
  uint64_t small, cold;
} xp_open_limits_resolved;
xp_open_limits_resolved xp_open_limits_resolve(const xpack_open_limits* limits); /* limits may be NULL */

/* Whether every bit of flags is an XPACK_OPEN_ flag. */
int xp_open_flags_known(unsigned flags);

/* A cache with nothing loaded yet, its flag-given settings made; NULL when out of memory. */
xpack_cache* xp_cache_new(unsigned flags);

/* Marks c skipped unread, size bytes: under XPACK_OPEN_SKIP_SMALL's limit, or (taking over the check's
 * descriptor) out of the page cache under XPACK_OPEN_SKIP_COLD's. */
void xp_cache_skip_small(xpack_cache* c, uint64_t size, uint64_t limit);
void xp_cache_skip_cold(xpack_cache* c, uint64_t size, uint64_t limit, const xp_residency_check* check);

/* Once c->base, size, mapped and map_delta hold the cache's bytes: checks them (name in messages), decides
 * whether this process may be served, and sets up the provider; *out = c. On failure unloads and frees c. */
xpack_status xp_cache_finish_open(xpack_cache* c, const char* name, unsigned flags, xpack_cache** out,
                                  xpack_error* err);

/* Reads c->size bytes at offset of fd into an aligned heap buffer that becomes c->base (name in messages;
 * offsets in them count from offset). Errors: XPACK_ERR_NOMEM, XPACK_ERR_IO. */
xpack_status xp_cache_read(xpack_cache* c, int fd, uint64_t offset, const char* name, xpack_error* err);

/* The refusal of `size` bytes, fewer than a header and a footer: NOT_XPACK unless the first bytes (`first`, at
 * least XPC_HEADER_MAGIC_SIZE of them when size allows, else NULL) are the header's magic, then TRUNCATED. */
xpack_status xp_refuse_too_short(const char* name, uint64_t size, const uint8_t* first, xpack_error* err);

/* Unmaps or frees c's bytes (nothing else). */
void xp_cache_unload(xpack_cache* c);

#endif
