/* XNNPACK's weights-cache provider over an open cache: look-ups answered from the mapping, XNNPACK's own
 * packing kept in heap memory on a miss (once per key: a later miss of the key is answered with it), every
 * answer counted. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "loader/cache_state.h"

/* 0: served; else why not (the miss's reason). */
typedef int answer;
#define ANSWER_HIT 0

/* What a miss reports: the key's identities, and the entry's family when an entry was refused. */
typedef struct miss_facts {
  xp_key_identities ids;
  int named;       /* ids were resolved */
  uint32_t family; /* UINT32_MAX: no entry, or none of its family */
} miss_facts;

/* BUMP where the answer is counted: XNNPACK 4ea82e5 asks again, with no bytes, after every look-up it got an
 * answer for, and that repeat is answered as before but counted nowhere (xpack_stats counts keys). */
#define COUNT(counted, p, field) \
  do {                            \
    if (counted) BUMP(p, field);  \
  } while (0)

/* Resolves a key to a region of the file, counting the refusal reason if any (when counted). On a hit *family is
 * the entry's family slot, for the caller to count the hit in. size_known: the caller compares the region's size
 * with what XNNPACK reads itself; otherwise the size bound to the key must equal it. */
static answer find(xpack_cache* c, const struct xnn_weights_cache_look_up_key* key, bool size_known, bool counted,
                   xp_region* region, xp_family_slot** family, miss_facts* facts) {
  xp_key_identities* ids = &facts->ids;
  facts->family = UINT32_MAX;
  facts->named = xp_bindings_resolve_key(&c->bindings, key->seed, key->kernel, key->bias, ids) == 0;
  if (!facts->named) return XPACK_MISS_UNBOUND;
  /* A file refused whole answers nothing, whether or not it holds the key (another XNNPACK build seeds its
   * keys otherwise): every look-up is counted under the refusal, as xpack_stats says. */
  if (c->refusal[0] != 0) {
    COUNT(counted, c, refused_incompatible);
    return XPACK_MISS_INCOMPATIBLE;
  }
  xp_entry entry;
  xp_find_result r = xp_view_find(&c->view, key->seed, ids->kernel, ids->kernel_len, ids->has_bias ? ids->bias : NULL,
                                    ids->bias_len, &entry, region, NULL);
  if (r == XPC_NOT_FOUND) return XPACK_MISS_NOT_FOUND;
  if (r == XPC_ENTRY_CORRUPT) {
    COUNT(counted, c, refused_corrupt);
    return XPACK_MISS_CORRUPT;
  }
  if (entry.family >= c->families.count) { /* XPC_NONE included */
    COUNT(counted, c, refused_no_family);
    return XPACK_MISS_NO_FAMILY;
  }
  facts->family = entry.family;
  /* The first look-up to reach a family runs its probe here, inside XNNPACK's runtime creation: the
   * probe builds its own subgraph and runtime and shares no state with the caller's (probe.h). */
  xp_family_slot* slot = xp_families_decide(&c->families, &c->view, NULL, entry.family);
  if (slot->refusal != XPACK_FAMILY_SERVED) {
    COUNT(counted, c, refused_probe);
    COUNT(counted, slot, refused);
    return XPACK_MISS_PROBE;
  }
  /* XNNPACK reads as many bytes as it computes for the operator, whatever the file says: a region of any
   * other size would let it read past the region (and past the mapping at the end of the data area). */
  if (!size_known && !ids->has_size && !c->trust_sizes) {
    COUNT(counted, c, refused_unsized);
    COUNT(counted, slot, refused);
    return XPACK_MISS_UNSIZED;
  }
  if (!size_known && ids->has_size && ids->size != region->size) {
    COUNT(counted, c, refused_size);
    COUNT(counted, slot, refused);
    return XPACK_MISS_SIZE;
  }
  /* Region bytes are covered by verify, not by open; this opt-in reads them before serving. */
  if (c->check_regions && !xp_region_bytes_match(&c->view, region, NULL, 0)) {
    COUNT(counted, c, refused_corrupt);
    COUNT(counted, slot, refused);
    return XPACK_MISS_CORRUPT;
  }
  *family = slot;
  return ANSWER_HIT;
}

static void count_miss(xpack_cache* c, answer a, const struct xnn_weights_cache_look_up_key* key,
                       const miss_facts* facts) {
  BUMP(c, misses);
  if (a == XPACK_MISS_UNBOUND) BUMP(c, misses_unbound);
  else if (a == XPACK_MISS_NOT_FOUND) BUMP(c, misses_not_found);
  else BUMP(c, misses_refused);
  if (c->on_miss == NULL) return;
  const int named = facts->named;
  const xpack_miss miss = {
      .reason = (xpack_miss_reason)a,
      .seed = key->seed,
      .kernel = named ? facts->ids.kernel : NULL,
      .kernel_len = named ? facts->ids.kernel_len : 0,
      .bias = named && facts->ids.has_bias ? facts->ids.bias : NULL,
      .bias_len = named && facts->ids.has_bias ? facts->ids.bias_len : 0,
      .family = facts->family,
  };
  c->on_miss(c->on_miss_context, &miss);
}

/* The heap offset of the weight kept (in table `kept`) for an earlier miss of this key (kept_weights.h), if it is
 * what XNNPACK reads now: for a look-up, the size bound for the key (or any size under XPACK_OPEN_TRUST_SIZES, as
 * for the file's regions); for an insert, the very bytes XNNPACK just packed. SIZE_MAX otherwise. */
static size_t kept_answer(xpack_cache* c, xp_kept_weights* kept, uint32_t seed, const xp_key_identities* ids,
                          const void* packed, size_t packed_size, bool counted) {
  size_t size = 0;
  const size_t offset = xp_kept_find(kept, seed, ids, &size);
  if (offset == SIZE_MAX) return SIZE_MAX;
  if (packed != NULL) {
    const void* bytes = xp_heap_addr(&c->heap, offset);
    if (bytes == NULL || size != packed_size || memcmp(bytes, packed, size) != 0) return SIZE_MAX;
  } else if (ids->has_size ? ids->size != size : !c->trust_sizes) {
    return SIZE_MAX;
  }
  COUNT(counted, c, misses_reused);
  return offset;
}

/* A key no identity names (a weight at an address nothing bound: a program loaded from other bytes than those
 * bound, an app's own subgraph) named by what XNNPACK packed for it: the XXH3-128 of the bytes and their count. Its
 * look-ups cannot be answered before XNNPACK packs (the bytes are not known yet), but the packing can be given
 * back for an identical earlier one: each load of such a program once kept a new copy of every weight until the
 * cache was closed (2,580 blocks, 79.7 MB after 30 loads of a small LLM in ExecuTorch with its mmap loader). */
static void name_by_bytes(const void* ptr, size_t size, xp_key_identities* ids) {
  const XXH128_hash_t h = XXH3_128bits(ptr, size);
  const int n = snprintf(ids->kernel, sizeof ids->kernel, "%016llx%016llx:%zu", (unsigned long long)h.high64,
                         (unsigned long long)h.low64, size);
  ids->kernel_len = n > 0 ? (size_t)n : 0;
  ids->bias_len = 0;
  ids->has_bias = 0;
  ids->has_size = 1;
  ids->size = size;
}

/* What XNNPACK packed for a miss: the packing kept for an earlier miss of the key when it holds the same bytes
 * (ptr then goes back), else ptr's bytes kept and recorded under the key. ids NULL: the key is not named, and the
 * packed bytes name it (in a table of their own: no identity of a program can meet them). */
static size_t keep_packed(xpack_cache* c, const struct xnn_weights_cache_look_up_key* key,
                          const xp_key_identities* ids, void* ptr, size_t size) {
  xp_kept_weights* kept = &c->kept;
  xp_key_identities by_bytes;
  if (ids == NULL) {
    name_by_bytes(ptr, size, &by_bytes);
    ids = &by_bytes;
    kept = &c->kept_unnamed;
  }
  const size_t reused = kept_answer(c, kept, key->seed, ids, ptr, size, true);
  if (reused != SIZE_MAX) {
    xp_heap_release(&c->heap, ptr);
    return reused;
  }
  const size_t offset = xp_heap_keep_bytes(&c->heap, ptr, size);
  if (offset != SIZE_MAX) xp_kept_add(kept, key->seed, ids, offset, size);
  return offset;
}

/* A look-up: the file's region, else the heap fallback of an earlier miss of the key, else SIZE_MAX (XNNPACK
 * packs, and its insert is expected: the key is pending). Uncounted: the repeat of a look-up just answered. */
static size_t look_up(xpack_cache* c, const struct xnn_weights_cache_look_up_key* key, bool counted) {
  COUNT(counted, c, lookups);
  xp_region region;
  xp_family_slot* family = NULL;
  miss_facts facts;
  answer a = find(c, key, false, counted, &region, &family, &facts);
  if (a == ANSWER_HIT) {
    if (counted) {
      BUMP(c, hits);
      BUMP(family, hits);
      atomic_fetch_add_explicit(&c->served_bytes, region.size, memory_order_relaxed);
    }
    return (size_t)region.offset;
  }
  if (counted) count_miss(c, a, key, &facts);
  if (facts.named) {
    const size_t kept = kept_answer(c, &c->kept, key->seed, &facts.ids, NULL, 0, counted);
    if (kept != SIZE_MAX) return kept;
  }
  if (counted) (void)xp_pending_add(&c->pending, key);
  return SIZE_MAX;
}

static size_t provider_look_up(void* context, const struct xnn_weights_cache_look_up_key* key) {
  return look_up(context, key, true);
}

static void* provider_reserve_space(void* context, size_t n) {
  xpack_cache* c = context;
  return xp_heap_reserve(&c->heap, n);
}

static size_t provider_look_up_or_insert(void* context, const struct xnn_weights_cache_look_up_key* key, void* ptr,
                                         size_t size) {
  xpack_cache* c = context;
  if (ptr == NULL) { /* 4ea82e5 repeats each look-up it got an answer for, with no bytes: answered, not counted */
    return look_up(c, key, false);
  }
  if (xp_pending_take(&c->pending, key)) { /* the insert after our own miss: already counted */
    xp_key_identities ids;
    const int named = xp_bindings_resolve_key(&c->bindings, key->seed, key->kernel, key->bias, &ids) == 0;
    return keep_packed(c, key, named ? &ids : NULL, ptr, size);
  }
  /* XNNPACK packed without asking first (depthwise convolution, deconvolution, ...). Serve the file's copy
   * only if it is exactly what XNNPACK just produced: a free end-to-end check. */
  BUMP(c, lookups);
  xp_region region;
  xp_family_slot* family = NULL;
  miss_facts facts;
  answer a = find(c, key, true, true, &region, &family, &facts);
  if (a == ANSWER_HIT) {
    if (region.size == size && memcmp(c->base + region.offset, ptr, size) == 0) {
      BUMP(c, hits);
      BUMP(family, hits);
      BUMP(c, hits_after_packing);
      atomic_fetch_add_explicit(&c->served_bytes, region.size, memory_order_relaxed);
      xp_heap_release(&c->heap, ptr);
      return (size_t)region.offset;
    }
    BUMP(c, refused_mismatch);
    BUMP(family, refused);
    a = XPACK_MISS_MISMATCH; /* facts.family is the entry's: find set it before serving */
  }
  count_miss(c, a, key, &facts);
  return keep_packed(c, key, facts.named ? &facts.ids : NULL, ptr, size);
}

static bool provider_is_finalized(void* context) { return true; }

static void* provider_offset_to_addr(void* context, size_t offset) {
  xpack_cache* c = context;
  if (offset < c->size) return c->base + offset;
  return xp_heap_addr(&c->heap, offset);
}

static enum xnn_status provider_delete_cache(void* context) {
  /* The cache is owned by the caller and closed with xpack_cache_close, never by XNNPACK. */
  return xnn_status_success;
}

void xpack_cache_on_miss(xpack_cache* c, xpack_miss_fn fn, void* context) {
  if (c == NULL || c->skipped) return;
  c->on_miss = fn;
  c->on_miss_context = context;
}

void xp_cache_provider_init(xpack_cache* c) {
  c->provider = (struct xnn_weights_cache_provider){
      .context = c,
      .look_up = provider_look_up,
      .reserve_space = provider_reserve_space,
      .look_up_or_insert = provider_look_up_or_insert,
      .is_finalized = provider_is_finalized,
      .offset_to_addr = provider_offset_to_addr,
      .delete_cache = provider_delete_cache,
  };
}
