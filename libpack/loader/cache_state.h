/* An open cache's state, shared by the files of the loader that make it up: loader.c opens and closes it,
 * provider.c answers XNNPACK's look-ups from it, stats.c reports its counters and families. Nothing outside
 * libpack/loader sees it (loader_internal.h is what the other libraries may call). */
#ifndef XPACK_SRC_LOADER_CACHE_STATE_H
#define XPACK_SRC_LOADER_CACHE_STATE_H

#include <stdatomic.h>
#include <stdint.h>

#include "cachefile/cache_view.h"
#include "loader/bindings.h"
#include "loader/cache_families.h"
#include "loader/heap_pool.h"
#include "loader/kept_weights.h"
#include "loader/pending_keys.h"
#include "loader/residency.h"
#include "xpack_loader.h"

struct xpack_cache {
  struct xnn_weights_cache_provider provider;
  uint8_t* base;
  uint64_t size;
  int mapped;
  uint64_t map_delta; /* mapped: bytes of the mapping before base (a cache inside another file, at an offset
                         that is not on a page: xpack_cache_open_fd) */
  int check_regions; /* XPACK_OPEN_CHECK_REGIONS */
  int trust_sizes;   /* XPACK_OPEN_TRUST_SIZES */
  int skipped;       /* XPACK_OPEN_SKIP_SMALL or _SKIP_COLD: the file was never read (base NULL, size its size)
                        and nothing below refusal is set up */
  xp_residency_check cold; /* skipped as cold: the file's descriptor, never read, until xpack_cache_warm_up */
  xp_view view;
  char refusal[256]; /* empty = served */
  xpack_miss_fn on_miss; /* xpack_cache_on_miss */
  void* on_miss_context;
  xp_bindings bindings;
  xp_heap_pool heap;
  xp_kept_weights kept; /* the heap pool's kept weights by key */
  xp_kept_weights kept_unnamed; /* those of keys no identity names, by their packed bytes (provider.c) */
  xp_pending_keys pending;
  xp_cache_families families;
  _Atomic uint64_t lookups, hits, hits_after_packing, misses, misses_unbound, misses_not_found, misses_refused,
      refused_incompatible, refused_corrupt, refused_mismatch, refused_probe, refused_no_family, refused_size,
      refused_unsized, served_bytes, misses_reused;
};

#define BUMP(c, field) atomic_fetch_add_explicit(&(c)->field, 1, memory_order_relaxed)
#define LOAD(c, field) atomic_load_explicit(&(c)->field, memory_order_relaxed)

/* Fills c->provider with the callbacks of provider.c, whose context is c. */
void xp_cache_provider_init(xpack_cache* c);

#endif
