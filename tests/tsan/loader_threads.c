/* The loader's thread-safety promises (xpack_loader.h, "Thread safety"), driven at once under ThreadSanitizer:
 *
 *   loader_threads CACHE ROUNDS
 *
 * CACHE is a cache of the sample subgraphs (xpack-subgraphs pack). Each round opens it (XPACK_OPEN_TRUST_SIZES,
 * every other round with XPACK_OPEN_PROBE_EARLY, so that the prober thread races the look-ups), binds every weight,
 * then runs at once:
 *   - two threads creating a runtime of every sample subgraph through the cache's provider (XNNPACK's look-ups and
 *     inserts, the families decided by whichever thread reaches them first);
 *   - one thread binding every weight again and binding its own pointers, as a second program's load would;
 *   - one thread reading what may be read meanwhile: xpack_cache_stats, xpack_cache_family, entries_served,
 *     xpack_cache_prefetch, xpack_cache_warm_up, xpack_mapped_file_at of the mapping;
 *   - one thread opening and closing the same file as caches of its own (opens run concurrently; the mapped-file
 *     registry changes under the reader above).
 * Every runtime must be created and some look-ups answered from the file, and ThreadSanitizer must report nothing
 * (the script runs it with halt_on_error=1). Exit 0, or 1 with the reason. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo_subgraphs.h"
#include "loader/cache_state.h" /* the mapping's address, for xpack_mapped_file_at */
#include "xpack.h"

static const char* g_path;
static xpack_cache* g_cache;
static atomic_int g_stop;
static atomic_int g_failures;
static char g_own_weights[16];

static void fail(const char* what) {
  fprintf(stderr, "loader_threads: %s\n", what);
  atomic_fetch_add(&g_failures, 1);
}

static void bind_cache(void* context, const void* raw, const char* identity) {
  if (xpack_cache_bind(context, raw, identity, strlen(identity), NULL) != XPACK_OK) fail("bind failed");
}

static void bind_every_weight(xpack_cache* cache) {
  for (size_t i = 0; i < demo_graph_count(); i++) {
    demo_graph g;
    if (demo_define(i, bind_cache, cache, &g) != xnn_status_success) {
      fail("defining a sample subgraph failed");
      continue;
    }
    xnn_delete_subgraph(g.subgraph);
  }
}

/* Creates a runtime of every sample subgraph through the provider. */
static void* create_runtimes(void* arg) {
  (void)arg;
  for (size_t i = 0; i < demo_graph_count(); i++) {
    demo_graph g;
    if (demo_define(i, NULL, NULL, &g) != xnn_status_success) {
      fail("defining a sample subgraph failed");
      continue;
    }
    xnn_runtime_t runtime = NULL;
    if (xnn_create_runtime_v4(g.subgraph, xpack_cache_provider(g_cache), NULL, NULL, 0, &runtime) !=
        xnn_status_success) {
      fail("xnn_create_runtime_v4 failed");
    } else {
      xnn_delete_runtime(runtime);
    }
    xnn_delete_subgraph(g.subgraph);
  }
  return NULL;
}

static void* rebind(void* arg) {
  (void)arg;
  for (int k = 0; k < 3 && !atomic_load(&g_stop); k++) {
    bind_every_weight(g_cache);
    for (size_t i = 0; i < sizeof g_own_weights; i++) {
      char identity[32];
      snprintf(identity, sizeof identity, "loader_threads:%zu", i);
      bind_cache(g_cache, &g_own_weights[i], identity);
    }
  }
  return NULL;
}

static void* observe(void* arg) {
  (void)arg;
  while (!atomic_load(&g_stop)) {
    xpack_stats stats;
    xpack_cache_stats(g_cache, &stats);
    for (uint32_t i = 0; i < xpack_cache_family_count(g_cache); i++) {
      xpack_cache_family_info info;
      if (xpack_cache_family(g_cache, i, &info, NULL) != XPACK_OK) fail("xpack_cache_family failed");
    }
    (void)xpack_cache_entries_served(g_cache);
    xpack_cache_prefetch(g_cache);
    xpack_cache_warm_up(g_cache);
    unsigned long long offset = 0;
    const char* name = xpack_mapped_file_at(g_cache->base, &offset);
    if (name != NULL && strcmp(name, g_path) != 0) fail("xpack_mapped_file_at named another file");
    /* An address above every mapping: each slot of the registry is read, those the opener changes too. */
    if (xpack_mapped_file_at((const void*)(UINTPTR_MAX - 16), &offset) != NULL) fail("an unmapped address was named");
  }
  return NULL;
}

static void* open_others(void* arg) {
  (void)arg;
  while (!atomic_load(&g_stop)) {
    xpack_cache* other = NULL;
    xpack_error err;
    if (xpack_cache_open(g_path, XPACK_OPEN_TRUST_SIZES, &other, &err) != XPACK_OK) fail(err.message);
    xpack_cache_close(other);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: loader_threads CACHE ROUNDS\n");
    return 2;
  }
  g_path = argv[1];
  const int rounds = atoi(argv[2]);
  xpack_error err;
  if (xpack_initialize_xnnpack(&err) != XPACK_OK) {
    fprintf(stderr, "loader_threads: %s\n", err.message);
    return 1;
  }
  for (int round = 0; round < rounds; round++) {
    const unsigned flags = XPACK_OPEN_TRUST_SIZES | (round % 2 ? XPACK_OPEN_PROBE_EARLY : 0);
    if (xpack_cache_open(g_path, flags, &g_cache, &err) != XPACK_OK) {
      fprintf(stderr, "loader_threads: %s\n", err.message);
      return 1;
    }
    if (xpack_cache_refusal(g_cache) != NULL) {
      fprintf(stderr, "loader_threads: %s refused: %s\n", g_path, xpack_cache_refusal(g_cache));
      return 1;
    }
    bind_every_weight(g_cache);
    atomic_store(&g_stop, 0);
    pthread_t creators[2], rebinder, observer, opener;
    for (int t = 0; t < 2; t++) pthread_create(&creators[t], NULL, create_runtimes, NULL);
    pthread_create(&rebinder, NULL, rebind, NULL);
    pthread_create(&observer, NULL, observe, NULL);
    pthread_create(&opener, NULL, open_others, NULL);
    for (int t = 0; t < 2; t++) pthread_join(creators[t], NULL);
    pthread_join(rebinder, NULL);
    atomic_store(&g_stop, 1);
    pthread_join(observer, NULL);
    pthread_join(opener, NULL);
    xpack_stats stats;
    xpack_cache_stats(g_cache, &stats);
    if (stats.hits == 0) fail("no look-up was answered from the file");
    xpack_cache_unbind_all(g_cache);
    xpack_cache_close(g_cache);
    g_cache = NULL;
  }
  demo_free_weights();
  const int failures = atomic_load(&g_failures);
  printf("loader_threads: %d rounds, %d failures\n", rounds, failures);
  return failures == 0 ? 0 : 1;
}
