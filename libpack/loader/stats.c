/* What an open cache reports: its counters (xpack_cache_stats), its families and their verdicts, its size. */
#include <pthread.h>
#include <string.h>

#include "common/error.h"
#include "loader/cache_state.h"
#include "loader/loader_internal.h"

void xpack_cache_stats(const xpack_cache* cc, xpack_stats* out) {
  xpack_cache* c = (xpack_cache*)cc; /* the heap pool's lock is taken for a consistent byte count */
  if (out == NULL) return;
  memset(out, 0, sizeof *out);
  if (c == NULL) return;
  out->lookups = LOAD(c, lookups);
  out->hits = LOAD(c, hits);
  out->hits_after_packing = LOAD(c, hits_after_packing);
  out->misses = LOAD(c, misses);
  out->misses_unbound = LOAD(c, misses_unbound);
  out->misses_not_found = LOAD(c, misses_not_found);
  out->misses_refused = LOAD(c, misses_refused);
  out->refused_incompatible = LOAD(c, refused_incompatible);
  out->refused_corrupt = LOAD(c, refused_corrupt);
  out->refused_mismatch = LOAD(c, refused_mismatch);
  out->refused_probe = LOAD(c, refused_probe);
  out->refused_no_family = LOAD(c, refused_no_family);
  out->refused_size = LOAD(c, refused_size);
  out->refused_unsized = LOAD(c, refused_unsized);
  out->served_bytes = LOAD(c, served_bytes);
  out->misses_reused = LOAD(c, misses_reused);
  if (c->skipped) return;
  pthread_mutex_lock(&c->heap.lock);
  out->heap_fallbacks = c->heap.kept_count;
  out->heap_fallback_bytes = c->heap.kept_bytes;
  pthread_mutex_unlock(&c->heap.lock);
}

const char* xpack_miss_reason_name(xpack_miss_reason reason) {
  switch (reason) {
    case XPACK_MISS_UNBOUND: return "unbound";
    case XPACK_MISS_NOT_FOUND: return "not_found";
    case XPACK_MISS_INCOMPATIBLE: return "incompatible";
    case XPACK_MISS_CORRUPT: return "corrupt";
    case XPACK_MISS_NO_FAMILY: return "no_family";
    case XPACK_MISS_PROBE: return "probe";
    case XPACK_MISS_SIZE: return "size";
    case XPACK_MISS_UNSIZED: return "unsized";
    case XPACK_MISS_MISMATCH: return "mismatch";
  }
  return "unknown";
}

const char* xpack_family_refusal_name(xpack_family_refusal refusal) {
  switch (refusal) {
    case XPACK_FAMILY_SERVED: return "served";
    case XPACK_FAMILY_PROBE_DIFFERS: return "probe_differs";
    case XPACK_FAMILY_PROBE_FAILED: return "probe_failed";
    case XPACK_FAMILY_UNKNOWN: return "unknown_family";
    case XPACK_FAMILY_FILE_REFUSED: return "file_refused";
    case XPACK_FAMILY_KEYS_DIFFER: return "keys_differ";
    default: return "unknown";
  }
}

uint32_t xpack_cache_family_count(const xpack_cache* c) { return c ? c->families.count : 0; }

xpack_status xpack_cache_family(xpack_cache* c, uint32_t index, xpack_cache_family_info* out, xpack_error* err) {
  if (c == NULL || out == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_cache_family: %s is NULL", c == NULL ? "the cache" : "out");
  }
  if (index >= c->families.count) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_cache_family: family %u of a file with %u families", index,
                   c->families.count);
  }
  xp_family_slot* slot = xp_families_decide(&c->families, &c->view, c->refusal[0] ? c->refusal : NULL, index);
  xp_family record;
  xp_view_family(&c->view, index, &record);
  const char* name;
  uint32_t len;
  out->name = xp_view_string(&c->view, record.name, &name, &len) == 0 ? name : "<bad string>";
  out->packed_probe = record.probe_hash;
  out->local_probe = slot->local_probe;
  out->packed_keys = record.probe_keys;
  out->local_keys = slot->local_keys;
  out->refusal = slot->refusal;
  out->reason = slot->refusal == XPACK_FAMILY_SERVED ? NULL : slot->reason;
  out->hits = LOAD(slot, hits);
  out->refused = LOAD(slot, refused);
  return XPACK_OK;
}

uint64_t xpack_cache_entry_count(const xpack_cache* c) { return c ? c->view.entries.count : 0; }
uint64_t xpack_cache_file_size(const xpack_cache* c) { return c ? c->size : 0; }

const xp_view* xp_cache_view(const xpack_cache* c) { return &c->view; }
bool xp_cache_skipped(const xpack_cache* c) { return c->skipped != 0; }
