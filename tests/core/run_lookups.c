/* run_lookups CACHE N SECONDS: opens CACHE as an app does, binds one weight to the identity "w" with the size of
 * a 64-byte region, and looks its key (seed 1, no bias) up N times the way XNNPACK does. Every look-up must hit,
 * and all N must take less than SECONDS together: for crafted caches whose index asks a look-up for more work
 * than a binary search (xpc_craft same-hash). Prints the time. Exit 0, or 1 with the reason. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <xnnpack.h>

#include "xpack_loader.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: run_lookups CACHE N SECONDS\n");
    return 2;
  }
  const long n = strtol(argv[2], NULL, 10);
  const double limit = strtod(argv[3], NULL);
  if (xnn_initialize(NULL) != xnn_status_success) return 1;
  xpack_cache* cache;
  xpack_error err;
  if (xpack_cache_open(argv[1], 0, &cache, &err) != XPACK_OK) {
    fprintf(stderr, "run_lookups: %s\n", err.message);
    return 1;
  }
  static const float weight[16];
  const struct xnn_weights_cache_look_up_key key = {.seed = 1, .kernel = weight, .bias = NULL};
  if (xpack_cache_bind(cache, weight, "w", 1, &err) != XPACK_OK ||
      xpack_cache_bind_size(cache, &key, 64, &err) != XPACK_OK) {
    fprintf(stderr, "run_lookups: %s\n", err.message);
    return 1;
  }
  struct xnn_weights_cache_provider* p = xpack_cache_provider(cache);
  const double start = now();
  long hits = 0;
  for (long i = 0; i < n; i++) hits += p->look_up(p->context, &key) != SIZE_MAX;
  const double took = now() - start;
  xpack_stats stats;
  xpack_cache_stats(cache, &stats);
  printf("run_lookups: %ld look-ups of one key over %llu entries: %ld hits, %.3f s (%.1f us each)\n", n,
         (unsigned long long)xpack_cache_entry_count(cache), hits, took, 1e6 * took / (double)(n ? n : 1));
  xpack_cache_close(cache);
  if (hits != n) {
    fprintf(stderr, "run_lookups: %ld of %ld look-ups missed (refused_corrupt %llu)\n", n - hits, n,
            (unsigned long long)stats.refused_corrupt);
    return 1;
  }
  if (took >= limit) {
    fprintf(stderr, "run_lookups: %.3f s, the limit is %.3f s\n", took, limit);
    return 1;
  }
  return 0;
}
