/* Filling the ideal provider from a cache file, before anything is timed.
 *
 * The ideal variant's subgraphs are defined with bench_ideal_bind, which records every static weight's pointer
 * and identity. Every entry of the cache whose kernel (and bias) identities were bound then gets its region
 * copied into heap memory and answered by pointer. No XNNPACK runtime is created before the timed one: filling
 * by packing in the same process (as the bench once did) ran XNNPACK's one-time configuration and left its
 * code and a heap shaped by the same allocations warm, which made the floor lower than any first launch. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_bench.h"
#include "xpack.h"

struct bench_ideal_binding {
  const void* raw;
  char* identity;
  size_t identity_len;
};

void bench_ideal_bind(void* context, const void* raw, const char* identity, size_t identity_len) {
  bench_ideal_bindings* b = context;
  if (b->count == b->capacity) {
    size_t capacity = b->capacity ? 2 * b->capacity : 256;
    struct bench_ideal_binding* bigger = realloc(b->items, capacity * sizeof *bigger);
    if (bigger == NULL) {
      b->out_of_memory = 1;
      return;
    }
    b->items = bigger;
    b->capacity = capacity;
  }
  char* copy = malloc(identity_len + 1);
  if (copy == NULL) {
    b->out_of_memory = 1;
    return;
  }
  memcpy(copy, identity, identity_len);
  copy[identity_len] = 0;
  b->items[b->count++] = (struct bench_ideal_binding){raw, copy, identity_len};
}

void bench_ideal_bindings_free(bench_ideal_bindings* b) {
  for (size_t i = 0; i < b->count; i++) free(b->items[i].identity);
  free(b->items);
  *b = (bench_ideal_bindings){0};
}

static int by_identity(const void* a, const void* b) {
  const struct bench_ideal_binding *x = a, *y = b;
  const size_t n = x->identity_len < y->identity_len ? x->identity_len : y->identity_len;
  const int c = memcmp(x->identity, y->identity, n);
  if (c != 0) return c;
  return x->identity_len < y->identity_len ? -1 : x->identity_len > y->identity_len;
}

/* The bindings of identity s[0, len): [*first, *first + return value) of the sorted array. */
static size_t bound_to(const bench_ideal_bindings* b, const char* s, size_t len, size_t* first) {
  size_t lo = 0, hi = b->count;
  const struct bench_ideal_binding key = {NULL, (char*)s, len};
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (by_identity(&b->items[mid], &key) < 0) lo = mid + 1;
    else hi = mid;
  }
  size_t end = lo;
  while (end < b->count && by_identity(&b->items[end], &key) == 0) end++;
  *first = lo;
  return end - lo;
}

static int read_region(int fd, const xpack_file_region* r, void* into) {
  for (uint64_t done = 0; done < r->size;) {
    const ssize_t n = pread(fd, (uint8_t*)into + done, (size_t)(r->size - done), (off_t)(r->offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    done += (uint64_t)n;
  }
  return 0;
}

typedef struct fill_state {
  bench_ideal* ideal;
  const bench_ideal_bindings* bindings;
  const xpack_file* file; /* its tables; the regions are read with pread, never through the mapping */
  uint64_t region_count;
  int fd;
  size_t* region_offsets; /* per region: its offset in the ideal, SIZE_MAX until read */
} fill_state;

/* Region `index` in the ideal's heap, read once however many entries share it (as the file stores it once). */
static int region_in_heap(fill_state* f, uint32_t index, size_t* offset, char* why, size_t why_size) {
  if (f->region_offsets[index] != SIZE_MAX) {
    *offset = f->region_offsets[index];
    return 0;
  }
  xpack_file_region r;
  xpack_file_get_region(f->file, index, &r);
  if (xpack_file_region_bytes(f->file, index) == NULL || r.stored_size != r.size) { /* only the bounds are checked */
    snprintf(why, why_size, "region %u is out of bounds or compressed", index);
    return -1;
  }
  void* block = bench_ideal_reserve(f->ideal, (size_t)r.size);
  if (block == NULL) {
    snprintf(why, why_size, "out of memory for %llu bytes", (unsigned long long)r.size);
    return -1;
  }
  if (read_region(f->fd, &r, block) != 0) {
    snprintf(why, why_size, "cannot read region %u (offset %llu)", index, (unsigned long long)r.offset);
    return -1;
  }
  *offset = f->region_offsets[index] = bench_ideal_keep(f->ideal, block); /* cannot fail: the pool's own block */
  return 0;
}

/* Answers entry i's keys if any is bound; every bound (kernel, bias) pointer pair shares its region. */
static int fill_entry(fill_state* f, uint64_t i, char* why, size_t why_size) {
  const bench_ideal_bindings* b = f->bindings;
  xpack_file_entry e;
  xpack_file_get_entry(f->file, i, &e);
  if (e.region >= f->region_count) {
    snprintf(why, why_size, "entry %llu: region %u out of range", (unsigned long long)i, e.region);
    return -1;
  }
  size_t k_first, b_first = 0;
  const size_t k_count = bound_to(b, e.kernel, strlen(e.kernel), &k_first);
  const size_t b_count = e.bias ? bound_to(b, e.bias, strlen(e.bias), &b_first) : 1;
  if (k_count == 0 || b_count == 0) return 0; /* a weight of another program */
  size_t offset;
  if (region_in_heap(f, e.region, &offset, why, why_size) != 0) return -1;
  xpack_file_region region;
  xpack_file_get_region(f->file, e.region, &region);
  /* bench_ideal_add allocates nothing (the keys were sized into it beforehand): a key answered already, or
   * one whose size is not the region's, is left as it is, to be served or to miss as the loader would. */
  for (size_t k = k_first; k < k_first + k_count; k++) {
    for (size_t j = b_first; j < b_first + b_count; j++) {
      const void* bias_raw = e.bias ? b->items[j].raw : NULL;
      (void)bench_ideal_add(f->ideal, e.seed, b->items[k].raw, bias_raw, (size_t)region.size, offset);
    }
  }
  return 0;
}

int bench_ideal_fill(bench_ideal* ideal, bench_ideal_bindings* b, const char* cache_path, char* why, size_t why_size) {
  if (b->out_of_memory || bench_ideal_expect_failed(ideal)) {
    snprintf(why, why_size, "out of memory while binding weights");
    return -1;
  }
  qsort(b->items, b->count, sizeof *b->items, by_identity);
  xpack_file* file = NULL;
  xpack_error err;
  if (xpack_file_open(cache_path, &file, &err) != XPACK_OK) {
    snprintf(why, why_size, "%s", err.message);
    return -1;
  }
  xpack_file_info info;
  xpack_file_get_info(file, &info);
  fill_state f = {ideal, b, file, info.region_count, open(cache_path, O_RDONLY | O_CLOEXEC), NULL};
  int rc = 0;
  if (f.fd < 0) {
    snprintf(why, why_size, "%s: cannot open: %s", cache_path, strerror(errno));
    rc = -1;
  } else if ((f.region_offsets = malloc((info.region_count + 1) * sizeof *f.region_offsets)) == NULL) {
    snprintf(why, why_size, "out of memory");
    rc = -1;
  } else {
    for (uint64_t r = 0; r < info.region_count; r++) f.region_offsets[r] = SIZE_MAX;
  }
  for (uint64_t i = 0; rc == 0 && i < info.entry_count; i++) rc = fill_entry(&f, i, why, why_size);
  free(f.region_offsets);
  if (f.fd >= 0) close(f.fd);
  xpack_file_close(file);
  return rc;
}
