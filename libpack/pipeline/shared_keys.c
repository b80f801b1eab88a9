/* One content key, one content, across the programs packed into one cache (shared_keys.h). A cache entry is keyed by
 * the weight's identity, which for a content key is the key itself: two programs whose named_data give one key
 * different bytes would share the first one's packing, and the second would compute with another weight, exit 0
 * (found by a review). ExecuTorch's exporter makes such a key the SHA-256 of the bytes, so a real pair never
 * differs; comparing the bytes is cheaper than hashing them. */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "pipeline/shared_keys.h"

typedef struct keyed {
  const xpack_et_named_data* named;
  size_t program;
} keyed;

static int key_order(const xpack_et_named_data* x, const xpack_et_named_data* y) {
  const size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
  const int c = memcmp(x->key, y->key, n);
  if (c != 0) return c;
  return x->key_len < y->key_len ? -1 : x->key_len > y->key_len;
}

/* By key, then by program: a run of one key lists its programs in the set's order. */
static int by_key(const void* a, const void* b) {
  const keyed *x = a, *y = b;
  const int c = key_order(x->named, y->named);
  if (c != 0) return c;
  return x->program < y->program ? -1 : x->program > y->program;
}

/* The .ptd entry a look-up of the key finds (the .ptd files first, in order: libpack/et/IDENTITY.md), or NULL;
 * *which (when not NULL) gets its .ptd's index. */
static const xpack_et_ptd_entry* in_some_ptd(const xpack_model_set* set, const xpack_et_named_data* named,
                                             size_t* which) {
  for (size_t d = 0; d < set->ptd_count; d++) {
    const xpack_et_ptd_entry* found = xpack_et_ptd_find(set->ptds[d], named->key, named->key_len);
    if (found != NULL) {
      if (which != NULL) *which = d;
      return found;
    }
  }
  return NULL;
}

static int same_bytes(const void* a, size_t a_size, const void* b, size_t b_size) {
  return a_size == b_size && (a == b || a_size == 0 || memcmp(a, b, a_size) == 0);
}

/* A content key a program's named_data holds and a .ptd holds too is the .ptd's (ExecuTorch reads that copy);
 * over other bytes, one of the two is not what the key names, and a cache packed from the .ptd's would serve its
 * packing to a run of the program alone, whose copy the key then finds (found by a review). */
static xpack_status check_program_against_ptds(const xpack_model_set* set, size_t p, xpack_error* err) {
  const xpack_et_program_info* info = xpack_et_program_get_info(set->programs[p]);
  for (size_t k = 0; k < info->named_data_count && set->ptd_count > 0; k++) {
    const xpack_et_named_data* named = &info->named_data[k];
    if (xpack_et_identity_reads_bytes(named->key, named->key_len)) continue;
    size_t d = 0;
    const xpack_et_ptd_entry* in_ptd = in_some_ptd(set, named, &d);
    if (in_ptd == NULL) continue;
    if (same_bytes(in_ptd->data, in_ptd->size, named->data, named->size)) continue;
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: named_data key %.*s holds %zu bytes that differ from the %zu bytes %s holds under the same "
                   "key: ExecuTorch reads the .ptd's, but a content key names one content (the SHA-256 of the "
                   "bytes), and a cache packed from the .ptd's would be served to the program run without it; "
                   "re-export the one whose key does not match its bytes",
                   set->program_files[p].path, (int)named->key_len, named->key, named->size, in_ptd->size,
                   set->ptd_files[d].path);
  }
  return XPACK_OK;
}

xpack_status xp_check_shared_content_keys(const xpack_model_set* set, xpack_error* err) {
  for (size_t p = 0; p < set->program_count; p++) {
    const xpack_status st = check_program_against_ptds(set, p, err);
    if (st != XPACK_OK) return st;
  }
  if (set->program_count < 2) return XPACK_OK;
  size_t total = 0;
  for (size_t p = 0; p < set->program_count; p++) total += xpack_et_program_get_info(set->programs[p])->named_data_count;
  if (total < 2) return XPACK_OK;
  keyed* all = malloc(total * sizeof *all);
  if (all == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "out of memory checking the programs' named keys");
  size_t n = 0;
  for (size_t p = 0; p < set->program_count; p++) {
    const xpack_et_program_info* info = xpack_et_program_get_info(set->programs[p]);
    for (size_t k = 0; k < info->named_data_count; k++) {
      const xpack_et_named_data* named = &info->named_data[k];
      /* The entry a look-up of the key finds in this program (its first, in file order), once per program. */
      if (xpack_et_program_find_named(set->programs[p], named->key, named->key_len) != named) continue;
      if (!xpack_et_identity_reads_bytes(named->key, named->key_len)) all[n++] = (keyed){named, p};
    }
  }
  qsort(all, n, sizeof *all, by_key);
  xpack_status st = XPACK_OK;
  for (size_t start = 0, i = 1; i < n && st == XPACK_OK; i++) {
    if (key_order(all[start].named, all[i].named) != 0) {
      start = i;
      continue;
    }
    const keyed *first = &all[start], *other = &all[i];
    if (same_bytes(first->named->data, first->named->size, other->named->data, other->named->size) ||
        in_some_ptd(set, other->named, NULL) != NULL) {
      continue;
    }
    st = xp_fail(err, XPACK_ERR_BAD_INPUT,
                 "%s: named_data key %.*s holds %zu bytes that differ from the %zu bytes %s holds under the same "
                 "key: a content key names one content (ExecuTorch's exporter makes it the SHA-256 of the bytes), "
                 "and packed together the second program would be served the first one's weight; pack them into "
                 "separate caches, or re-export the one whose key does not match its bytes",
                 set->program_files[other->program].path, (int)other->named->key_len, other->named->key,
                 other->named->size, first->named->size, set->program_files[first->program].path);
  }
  free(all);
  return st;
}
