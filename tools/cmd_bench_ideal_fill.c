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
#include "loader_internal.h"
#include "xpc_format.h"

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

static int read_region(int fd, const xpc_region* r, void* into) {
  for (uint64_t done = 0; done < r->size;) {
    const ssize_t n = pread(fd, (uint8_t*)into + done, (size_t)(r->size - done), (off_t)(r->offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    done += (uint64_t)n;
  }
  return 0;
}

/* Copies entry i's region if any of its keys is bound; every bound (kernel, bias) pointer pair shares it. */
static int fill_entry(bench_ideal* ideal, const bench_ideal_bindings* b, const xpc_view* view, int fd, uint64_t i,
                      char* why, size_t why_size) {
  xpc_entry e;
  xpc_view_entry(view, i, &e);
  const char *kernel, *bias = NULL;
  uint32_t kernel_len, bias_len = 0;
  if (xpc_view_string(view, e.kernel, &kernel, &kernel_len) != 0 ||
      (e.bias != XPC_NONE && xpc_view_string(view, e.bias, &bias, &bias_len) != 0) ||
      e.region >= view->regions.count) {
    snprintf(why, why_size, "entry %llu: identity or region out of range", (unsigned long long)i);
    return -1;
  }
  size_t k_first, b_first = 0;
  const size_t k_count = bound_to(b, kernel, kernel_len, &k_first);
  const size_t b_count = bias ? bound_to(b, bias, bias_len, &b_first) : 1;
  if (k_count == 0 || b_count == 0) return 0; /* a weight of another program */
  xpc_region r;
  xpc_view_region(view, e.region, &r);
  if (!xpc_region_is_sound(view, &r) || r.stored_size != r.size) {
    snprintf(why, why_size, "entry %llu: region %u is out of bounds or compressed", (unsigned long long)i, e.region);
    return -1;
  }
  void* block = bench_ideal_reserve(ideal, (size_t)r.size);
  if (block == NULL) {
    snprintf(why, why_size, "out of memory for %llu bytes", (unsigned long long)r.size);
    return -1;
  }
  if (read_region(fd, &r, block) != 0) {
    snprintf(why, why_size, "cannot read region %u (offset %llu)", e.region, (unsigned long long)r.offset);
    return -1;
  }
  const size_t offset = bench_ideal_keep(ideal, block); /* cannot fail: the block is the pool's own */
  for (size_t k = k_first; k < k_first + k_count; k++) {
    for (size_t j = b_first; j < b_first + b_count; j++) {
      const void* bias_raw = bias ? b->items[j].raw : NULL;
      if (bench_ideal_add(ideal, e.seed, b->items[k].raw, bias_raw, offset) < 0) {
        snprintf(why, why_size, "out of memory");
        return -1;
      }
    }
  }
  return 0;
}

int bench_ideal_fill(bench_ideal* ideal, bench_ideal_bindings* b, const char* cache_path, char* why, size_t why_size) {
  if (b->out_of_memory) {
    snprintf(why, why_size, "out of memory while binding weights");
    return -1;
  }
  qsort(b->items, b->count, sizeof *b->items, by_identity);
  xpack_cache* cache = NULL;
  xpack_error err;
  if (xpack_cache_open(cache_path, 0, &cache, &err) != XPACK_OK) {
    snprintf(why, why_size, "%s", err.message);
    return -1;
  }
  const int fd = open(cache_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(why, why_size, "%s: cannot open: %s", cache_path, strerror(errno));
    xpack_cache_close(cache);
    return -1;
  }
  const xpc_view* view = xp_cache_view(cache);
  int rc = 0;
  for (uint64_t i = 0; rc == 0 && i < view->entries.count; i++) {
    rc = fill_entry(ideal, b, view, fd, i, why, why_size);
  }
  close(fd);
  xpack_cache_close(cache);
  return rc;
}
