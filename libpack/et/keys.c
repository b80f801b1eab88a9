/* Sorted key indexes for named data: lookups by exact bytes, as ExecuTorch compares keys. */
#include <stdlib.h>
#include <string.h>

#include "et/et_internal.h"

typedef struct sort_ctx {
  const uint8_t* items;
  size_t item_size, key_offset, len_offset;
} sort_ctx;

static void key_of(const sort_ctx* c, size_t i, const char** key, size_t* len) {
  const uint8_t* it = c->items + i * c->item_size;
  memcpy(key, it + c->key_offset, sizeof *key);
  memcpy(len, it + c->len_offset, sizeof *len);
}

static int cmp(const sort_ctx* c, size_t a, size_t b) {
  const char *ka, *kb;
  size_t la, lb;
  key_of(c, a, &ka, &la);
  key_of(c, b, &kb, &lb);
  int r = xp_et_key_compare(ka ? ka : "", la, kb ? kb : "", lb);
  return r ? r : (a > b) - (a < b); /* stable: file order among equal keys */
}

/* Merge sort rather than qsort: qsort's comparator cannot carry the item layout without globals. */
static void merge_sort(size_t* idx, size_t* tmp, size_t n, const sort_ctx* c) {
  if (n < 2) return;
  size_t h = n / 2;
  merge_sort(idx, tmp, h, c);
  merge_sort(idx + h, tmp, n - h, c);
  size_t i = 0, j = h, k = 0;
  while (i < h && j < n) tmp[k++] = cmp(c, idx[i], idx[j]) <= 0 ? idx[i++] : idx[j++];
  while (i < h) tmp[k++] = idx[i++];
  while (j < n) tmp[k++] = idx[j++];
  memcpy(idx, tmp, n * sizeof *idx);
}

void xp_et_sort_keys(size_t* idx, size_t n, const void* items, size_t item_size, size_t key_offset,
                     size_t len_offset) {
  sort_ctx c = {items, item_size, key_offset, len_offset};
  for (size_t i = 0; i < n; i++) idx[i] = i;
  size_t* tmp = n > 1 ? malloc(n * sizeof *tmp) : NULL;
  if (tmp) {
    merge_sort(idx, tmp, n, &c);
    free(tmp);
  } else {
    /* Out of memory for the scratch: fall back to insertion sort (still correct). */
    for (size_t i = 1; i < n; i++) {
      size_t v = idx[i], j = i;
      while (j > 0 && cmp(&c, idx[j - 1], v) > 0) {
        idx[j] = idx[j - 1];
        j--;
      }
      idx[j] = v;
    }
  }
}

size_t xp_et_find_key(const size_t* idx, size_t n, const void* items, size_t item_size, size_t key_offset,
                      size_t len_offset, const char* key, size_t key_len) {
  sort_ctx c = {items, item_size, key_offset, len_offset};
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const char* k;
    size_t l;
    key_of(&c, idx[mid], &k, &l);
    int r = xp_et_key_compare(k ? k : "", l, key, key_len);
    if (r < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < n) {
    const char* k;
    size_t l;
    key_of(&c, idx[lo], &k, &l);
    if (k && xp_et_key_compare(k, l, key, key_len) == 0) return idx[lo];
  }
  return SIZE_MAX;
}
