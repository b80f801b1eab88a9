/* xpack-bench-open: what xpack_cache_open costs against the number of entries and the bytes of weights.
 *
 * For each entry count (10 to 100,000) it writes a cache through the recording writer's provider exactly as
 * XNNPACK drives it (look_up, reserve_space, look_up_or_insert) with synthetic packed bytes, so no model and
 * no packing is needed, then opens and closes it many times with the file in the page cache and reports the
 * median and minimum open time and the heap allocations one open makes; then opens it cold a few times (dropped
 * from the page cache before each) and reports the storage reads (major faults) and the bytes the open brought
 * into the page cache. It repeats the largest count under
 * the target (10,000 entries) with much larger weights to show that open does not read them.
 *
 * Allocations are counted by wrapping malloc, calloc, realloc, posix_memalign and aligned_alloc at link time
 * (-Wl,--wrap): every call libpack makes is seen; libc's own internal allocations are not.
 *
 * usage: xpack-bench-open [--dir DIR] [--reps N] [--big-payload BYTES] [--max-entries N] [--json] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <xnnpack.h>

#include "page_cache.h"
#include "timing.h"
#include "xpack.h"

/* ---- allocation counting ---- */

static unsigned long g_allocations;
static unsigned long long g_allocated_bytes;

void* __real_malloc(size_t n);
void* __real_calloc(size_t count, size_t n);
void* __real_realloc(void* p, size_t n);
int __real_posix_memalign(void** out, size_t alignment, size_t n);
void* __real_aligned_alloc(size_t alignment, size_t n);

void* __wrap_malloc(size_t n) {
  g_allocations++;
  g_allocated_bytes += n;
  return __real_malloc(n);
}
void* __wrap_calloc(size_t count, size_t n) {
  g_allocations++;
  g_allocated_bytes += (unsigned long long)count * n;
  return __real_calloc(count, n);
}
void* __wrap_realloc(void* p, size_t n) {
  g_allocations++;
  g_allocated_bytes += n;
  return __real_realloc(p, n);
}
int __wrap_posix_memalign(void** out, size_t alignment, size_t n) {
  g_allocations++;
  g_allocated_bytes += n;
  return __real_posix_memalign(out, alignment, n);
}
void* __wrap_aligned_alloc(size_t alignment, size_t n) {
  g_allocations++;
  g_allocated_bytes += n;
  return __real_aligned_alloc(alignment, n);
}

/* ---- synthetic caches ---- */

/* Writes `entries` entries of `payload` bytes each (distinct bytes, so none is deduplicated). */
static int write_cache(const char* path, size_t entries, size_t payload) {
  xpack_writer* w;
  xpack_error err;
  if (xpack_writer_create(path, NULL, &w, &err) != XPACK_OK) {
    fprintf(stderr, "xpack-bench-open: %s\n", err.message);
    return -1;
  }
  struct xnn_weights_cache_provider* p = xpack_writer_provider(w);
  /* Every recorded entry needs the packing family of its node; fp32 fully connected for all of them. */
  const xpack_family family = {XPACK_OP_FULLY_CONNECTED, xnn_datatype_fp32, xnn_datatype_fp32, xnn_datatype_invalid,
                               xnn_datatype_fp32, 0, 0};
  /* One byte per entry gives every entry its own raw pointer, as distinct weights have. */
  unsigned char* raw = malloc(entries);
  if (raw == NULL) {
    xpack_writer_abort(w);
    return -1;
  }
  int rc = 0;
  for (size_t i = 0; i < entries && rc == 0; i++) {
    char identity[64];
    int len = snprintf(identity, sizeof identity, "bench.layer%zu.weight", i);
    xpack_writer_bind(w, raw + i, identity, (size_t)len, NULL);
    if (xpack_writer_bind_family(w, raw + i, &family, &err) != XPACK_OK) {
      fprintf(stderr, "xpack-bench-open: %s\n", err.message);
      rc = -1;
      break;
    }
    struct xnn_weights_cache_look_up_key key = {.seed = 0x5eed, .kernel = raw + i, .bias = NULL};
    if (p->look_up(p->context, &key) != SIZE_MAX) continue;
    unsigned char* bytes = p->reserve_space(p->context, payload);
    if (bytes == NULL) {
      rc = -1;
      break;
    }
    uint64_t x = i * 0x9E3779B97F4A7C15ULL + 1;
    for (size_t k = 0; k < payload; k += 8) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      memcpy(bytes + k, &x, payload - k < 8 ? payload - k : 8);
    }
    if (p->look_up_or_insert(p->context, &key, bytes, payload) == SIZE_MAX) rc = -1;
  }
  free(raw);
  if (rc != 0) {
    fprintf(stderr, "xpack-bench-open: the writer refused a synthetic entry\n");
    xpack_writer_abort(w);
    return -1;
  }
  if (xpack_writer_finish(w, &err) != XPACK_OK) {
    fprintf(stderr, "xpack-bench-open: %s\n", err.message);
    return -1;
  }
  return 0;
}

typedef struct point {
  size_t entries, payload;
  unsigned long long file_bytes;
  double median_us, min_us;
  unsigned long allocations;
  unsigned long long allocated_bytes;
  double cold_median_us;        /* the file dropped from the page cache before each open */
  long cold_major_faults;       /* of the median cold open: the storage reads the mapping took */
  unsigned long long cold_resident_bytes; /* of the file in the page cache after that open (read-ahead included) */
} point;

static long major_faults(void) {
  struct rusage usage;
  return getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_majflt : 0;
}

typedef struct cold_open {
  double us;
  long major_faults;
  int64_t resident_bytes;
} cold_open;

static int by_time(const void* a, const void* b) {
  return bench_compare_doubles(&((const cold_open*)a)->us, &((const cold_open*)b)->us);
}

/* Opens `path` cold `reps` times (each after dropping it from the page cache) and keeps the median open's time,
 * major faults and the bytes the open brought into the page cache. */
static int measure_cold(const char* path, int reps, point* out) {
  cold_open runs[9];
  if (reps > 9) reps = 9;
  for (int r = 0; r < reps; r++) {
    if (bench_drop_from_page_cache(path) != 0 || bench_resident_bytes(path) != 0) {
      fprintf(stderr, "xpack-bench-open: %s stays in the page cache; no cold figure\n", path);
      return -1;
    }
    xpack_error err;
    xpack_cache* c;
    const long f0 = major_faults();
    const double t0 = bench_now_us();
    xpack_status st = xpack_cache_open(path, 0, &c, &err);
    runs[r].us = bench_now_us() - t0;
    runs[r].major_faults = major_faults() - f0;
    if (st != XPACK_OK) {
      fprintf(stderr, "xpack-bench-open: %s\n", err.message);
      return -1;
    }
    xpack_cache_close(c);
    runs[r].resident_bytes = bench_resident_bytes(path);
  }
  qsort(runs, (size_t)reps, sizeof runs[0], by_time);
  const cold_open* median = &runs[reps / 2];
  out->cold_median_us = median->us;
  out->cold_major_faults = median->major_faults;
  out->cold_resident_bytes = median->resident_bytes > 0 ? (unsigned long long)median->resident_bytes : 0;
  return 0;
}

static int measure(const char* dir, size_t entries, size_t payload, int reps, int cold_reps, point* out) {
  char path[4096];
  snprintf(path, sizeof path, "%s/open_%zu_%zu.xpc", dir, entries, payload);
  if (write_cache(path, entries, payload) != 0) return -1;
  double* t = malloc((size_t)reps * sizeof *t);
  if (t == NULL) {
    unlink(path);
    return -1;
  }
  xpack_error err;
  xpack_cache* c;
  memset(out, 0, sizeof *out);
  for (int r = 0; r < reps; r++) {
    const unsigned long before = g_allocations;
    const unsigned long long bytes_before = g_allocated_bytes;
    const double t0 = bench_now_us();
    xpack_status st = xpack_cache_open(path, 0, &c, &err);
    t[r] = bench_now_us() - t0;
    if (st != XPACK_OK) {
      fprintf(stderr, "xpack-bench-open: %s\n", err.message);
      free(t);
      unlink(path);
      return -1;
    }
    out->allocations = g_allocations - before; /* the same every time: the last one is kept */
    out->allocated_bytes = g_allocated_bytes - bytes_before;
    if (xpack_cache_entry_count(c) != entries) {
      fprintf(stderr, "xpack-bench-open: %s has %llu entries, expected %zu\n", path,
              (unsigned long long)xpack_cache_entry_count(c), entries);
      xpack_cache_close(c);
      free(t);
      unlink(path);
      return -1;
    }
    out->file_bytes = xpack_cache_file_size(c);
    xpack_cache_close(c);
  }
  if (measure_cold(path, cold_reps, out) != 0) {
    free(t);
    unlink(path);
    return -1;
  }
  out->entries = entries;
  out->payload = payload;
  out->median_us = bench_median(t, reps); /* sorts t */
  out->min_us = t[0];
  free(t);
  unlink(path);
  return 0;
}

int main(int argc, char** argv) {
  const char* dir = NULL;
  int reps = 201, cold_reps = 5, as_json = 0;
  size_t big_payload = 16384, max_entries = 100000;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) dir = argv[++i];
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--big-payload") == 0 && i + 1 < argc) big_payload = (size_t)strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--max-entries") == 0 && i + 1 < argc) max_entries = (size_t)strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--json") == 0) as_json = 1;
    else {
      fprintf(stderr, "usage: xpack-bench-open [--dir DIR] [--reps N] [--big-payload BYTES] [--max-entries N] [--json]\n");
      return 2;
    }
  }
  if (reps < 1 || big_payload < 1) {
    fprintf(stderr, "xpack-bench-open: --reps and --big-payload must be positive\n");
    return 2;
  }
  char made[4096] = "";
  if (dir == NULL) {
    const char* tmp = getenv("TMPDIR");
    snprintf(made, sizeof made, "%s/xpack-bench-open-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(made) == NULL) {
      fprintf(stderr, "xpack-bench-open: cannot create %s: %s\n", made, strerror(errno));
      return 4;
    }
    dir = made;
  }
  if (xnn_initialize(NULL) != xnn_status_success) {
    fprintf(stderr, "xpack-bench-open: xnn_initialize failed\n");
    return 4;
  }
  point points[16];
  size_t n = 0;
  int rc = 0;
  for (size_t entries = 10; entries <= max_entries && rc == 0; entries *= 10) {
    rc = measure(dir, entries, 64, reps, cold_reps, &points[n++]);
  }
  const size_t target_entries = max_entries < 10000 ? max_entries : 10000;
  if (rc == 0) rc = measure(dir, target_entries, big_payload, reps, cold_reps, &points[n++]);
  if (made[0]) rmdir(made);
  if (rc != 0) return 4;
  if (as_json) {
    printf("{\"reps\":%d,\"points\":[", reps);
    for (size_t i = 0; i < n; i++) {
      printf("%s{\"entries\":%zu,\"payload_bytes\":%zu,\"file_bytes\":%llu,\"open_us_median\":%.3f,"
             "\"open_us_min\":%.3f,\"allocations\":%lu,\"allocated_bytes\":%llu,\"cold_open_us_median\":%.3f,"
             "\"cold_major_faults\":%ld,\"cold_resident_bytes\":%llu}",
             i ? "," : "", points[i].entries, points[i].payload, points[i].file_bytes, points[i].median_us,
             points[i].min_us, points[i].allocations, points[i].allocated_bytes, points[i].cold_median_us,
             points[i].cold_major_faults, points[i].cold_resident_bytes);
    }
    printf("]}\n");
  } else {
    printf("xpack_cache_open, file in the page cache, %d opens each (median, min):\n", reps);
    printf("%10s %14s %14s %12s %10s %12s %16s %12s %8s %14s\n", "entries", "weight bytes", "file bytes",
           "median us", "min us", "allocations", "allocated bytes", "cold us", "cold I/O", "cold read");
    for (size_t i = 0; i < n; i++) {
      printf("%10zu %14zu %14llu %12.2f %10.2f %12lu %16llu %12.2f %8ld %14llu\n", points[i].entries,
             points[i].payload, points[i].file_bytes, points[i].median_us, points[i].min_us, points[i].allocations,
             points[i].allocated_bytes, points[i].cold_median_us, points[i].cold_major_faults,
             points[i].cold_resident_bytes);
    }
    printf("cold: median of %d opens, each after dropping the file from the page cache; cold I/O = major faults "
           "of that open, cold read = bytes of the file in the page cache after it (read-ahead included)\n",
           cold_reps);
  }
  return 0;
}
