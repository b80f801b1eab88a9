/* xpack-subgraphs: packs the sample subgraphs of demo_subgraphs.c into a cache, or runs them with or
 * without one and prints every output's XXH3-64 and the loader's counters. Tests compare two processes.
 *
 *   xpack-subgraphs pack OUT.xpc
 *   xpack-subgraphs run [--cache FILE [--cache-at OFFSET SIZE]] [--read] [--probe-early] [--only NAME] [--unbound]
 *   (--cache-at: the cache is the SIZE bytes at OFFSET of FILE, opened with xpack_cache_open_fd; --unbound: the
 *   weights are bound to nothing, as an app's whose program the cache does not know)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "loader/xnn_compat.h"
#include "demo_subgraphs.h"
#include "xpack.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void bind_writer(void* ctx, const void* raw, const char* id) {
  if (xpack_writer_bind(ctx, raw, id, strlen(id), NULL) != XPACK_OK) abort();
}
static void bind_cache(void* ctx, const void* raw, const char* id) {
  if (xpack_cache_bind(ctx, raw, id, strlen(id), NULL) != XPACK_OK) abort();
}

static int pack(const char* out) {
  xpack_writer* w;
  xpack_error err;
  if (xpack_writer_create(out, NULL, &w, &err) != XPACK_OK) {
    fprintf(stderr, "xpack-subgraphs: %s\n", err.message);
    return 1;
  }
  xpack_writer_add_input(w, "demo-subgraphs", XPACK_INPUT_OTHER, 0, 0, 0, 0, NULL);
  xpack_writer_add_info(w, "generator", "xpack-subgraphs", NULL);
  for (size_t i = 0; i < demo_graph_count(); i++) {
    demo_graph g;
    xnn_runtime_t rt = NULL;
    int defined = demo_define(i, bind_writer, w, &g) == xnn_status_success;
    for (size_t k = 0; defined && k < g.num_families; k++) {
      if (xpack_writer_bind_family(w, g.families[k].kernel, &g.families[k].family, &err) != XPACK_OK) {
        fprintf(stderr, "xpack-subgraphs: %s: %s\n", demo_graph_name(i), err.message);
      }
    }
    if (!defined ||
        xnn_create_runtime_v4(g.subgraph, xpack_writer_provider(w), NULL, NULL, 0, &rt) != xnn_status_success) {
      fprintf(stderr, "xpack-subgraphs: defining or creating %s failed\n", demo_graph_name(i));
      xpack_writer_abort(w);
      return 1;
    }
    xnn_delete_runtime(rt);
    xnn_delete_subgraph(g.subgraph);
    xpack_writer_unbind_all(w);
  }
  xpack_writer_stats s;
  xpack_writer_stats_get(w, &s);
  if (xpack_writer_finish(w, &err) != XPACK_OK) {
    fprintf(stderr, "xpack-subgraphs: %s\n", err.message);
    return 1;
  }
  printf("packed entries %llu regions %llu packed_bytes %llu stored_bytes %llu reused %llu unbound %llu no_family %llu "
         "caches_depthwise %d\n",
         (unsigned long long)s.entries, (unsigned long long)s.regions, (unsigned long long)s.packed_bytes,
         (unsigned long long)s.stored_bytes, (unsigned long long)s.reused, (unsigned long long)s.unbound,
         (unsigned long long)s.no_family, XPACK_XNN_CACHES_DEPTHWISE_WEIGHTS);
  return 0;
}

/* Runs graph `index`, appending its line to out. shared_bindings: the caller bound every weight already
 * (several threads at once), so neither bind nor unbind here. */
static int g_unbound; /* --unbound */

static int run_graph(size_t index, xpack_cache* cache, int shared_bindings, char* out, size_t cap) {
  xpack_stats before, after;
  xpack_cache_stats(cache, &before);
  demo_graph g;
  int bind_here = cache != NULL && !shared_bindings && !g_unbound;
  if (demo_define(index, bind_here ? bind_cache : NULL, cache, &g) != xnn_status_success) return -1;
  xnn_runtime_t rt = NULL;
  double t0 = now_us();
  enum xnn_status st = xnn_create_runtime_v4(g.subgraph, cache ? xpack_cache_provider(cache) : NULL, NULL, NULL, 0, &rt);
  double create_us = now_us() - t0;
  if (bind_here) xpack_cache_unbind_all(cache);
  if (st != xnn_status_success) return -1;
  struct xnn_external_value ext[2 * DEMO_MAX_EXTERNALS];
  size_t n = 0;
  uint64_t seed = 0x1234 + index;
  for (size_t i = 0; i < g.num_inputs; i++) {
    uint8_t* buf = calloc(1, g.inputs[i].bytes + XNN_EXTRA_BYTES);
    for (size_t k = 0; k < g.inputs[i].bytes; k += g.inputs[i].is_float ? 4 : 1) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      if (g.inputs[i].is_float) {
        float f = (float)((int32_t)(seed >> 40) - (1 << 23)) / (float)(1 << 23);
        memcpy(buf + k, &f, 4);
      } else {
        buf[k] = (uint8_t)(seed >> 56);
      }
    }
    ext[n++] = (struct xnn_external_value){g.inputs[i].id, buf};
  }
  for (size_t i = 0; i < g.num_outputs; i++) {
    ext[n++] = (struct xnn_external_value){g.outputs[i].id, calloc(1, g.outputs[i].bytes + XNN_EXTRA_BYTES)};
  }
  int rc = 0;
  if (xnn_reshape_runtime(rt) != xnn_status_success || xnn_setup_runtime_v2(rt, n, ext) != xnn_status_success ||
      xnn_invoke_runtime(rt) != xnn_status_success) {
    rc = -1;
  } else {
    xpack_cache_stats(cache, &after);
    size_t used = strlen(out);
    used += (size_t)snprintf(out + used, cap - used, "graph %s create_us %.0f lookups %llu hits %llu misses %llu",
                             g.name, create_us, (unsigned long long)(after.lookups - before.lookups),
                             (unsigned long long)(after.hits - before.hits),
                             (unsigned long long)(after.misses - before.misses));
    for (size_t i = 0; i < g.num_outputs && used < cap; i++) {
      used += (size_t)snprintf(out + used, cap - used, " output_xxh3 %016llx",
                               (unsigned long long)XXH3_64bits(ext[g.num_inputs + i].data, g.outputs[i].bytes));
    }
    if (used < cap) snprintf(out + used, cap - used, "\n");
  }
  for (size_t i = 0; i < n; i++) free(ext[i].data);
  xnn_delete_runtime(rt);
  xnn_delete_subgraph(g.subgraph);
  return rc;
}

typedef struct worker {
  pthread_t thread;
  xpack_cache* cache;
  const char* only;
  int rc;
  char hashes[8192]; /* output hashes only: timings and per-graph counters differ between threads */
} worker;

static void strip_to_hashes(const char* lines, char* out, size_t cap) {
  out[0] = 0;
  for (const char* p = strstr(lines, "output_xxh3"); p != NULL; p = strstr(p + 1, "output_xxh3")) {
    strncat(out, p, 28);
    if (strlen(out) + 32 > cap) break;
  }
}

static void* worker_main(void* arg) {
  worker* wk = arg;
  char lines[8192] = {0};
  for (size_t i = 0; i < demo_graph_count(); i++) {
    if (wk->only && strcmp(wk->only, demo_graph_name(i)) != 0) continue;
    if (run_graph(i, wk->cache, 1, lines, sizeof lines) != 0) wk->rc = 1;
  }
  strip_to_hashes(lines, wk->hashes, sizeof wk->hashes);
  return NULL;
}

static void bind_all(xpack_cache* cache) {
  for (size_t i = 0; i < demo_graph_count(); i++) {
    demo_graph g;
    if (demo_define(i, bind_cache, cache, &g) == xnn_status_success) xnn_delete_subgraph(g.subgraph);
  }
}

static int run(int argc, char** argv) {
  const char* cache_path = NULL;
  unsigned long long at_offset = 0, at_size = 0;
  int cache_at = 0;
  int threads = 0, repeat = 1; /* repeat: every graph defined, created and run that many times over one cache */
  const char* only = NULL;
  unsigned flags = XPACK_OPEN_TRUST_SIZES; /* subgraphs defined by hand: nothing sizes their weights */
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--cache") == 0 && i + 1 < argc) cache_path = argv[++i];
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
    else if (strcmp(argv[i], "--read") == 0) flags |= XPACK_OPEN_READ;
    else if (strcmp(argv[i], "--unbound") == 0) g_unbound = 1;
    else if (strcmp(argv[i], "--probe-early") == 0) flags |= XPACK_OPEN_PROBE_EARLY;
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (strcmp(argv[i], "--cache-at") == 0 && i + 2 < argc) {
      at_offset = strtoull(argv[++i], NULL, 0);
      at_size = strtoull(argv[++i], NULL, 0);
      cache_at = 1;
    }
    else return 2;
  }
  if (repeat < 1) return 2;
  xpack_cache* cache = NULL;
  if (cache_path) {
    xpack_error err;
    xpack_status opened;
    if (cache_at) {
      const int fd = open(cache_path, O_RDONLY | O_CLOEXEC);
      opened = fd < 0 ? xpack_cache_open(cache_path, flags, &cache, &err) /* its error names the file */
                      : xpack_cache_open_fd(fd, at_offset, at_size, cache_path, flags, NULL, &cache, &err);
      if (fd >= 0) close(fd); /* the loader keeps what it needs */
    } else {
      opened = xpack_cache_open(cache_path, flags, &cache, &err);
    }
    if (opened != XPACK_OK) {
      fprintf(stderr, "xpack-subgraphs: %s\n", err.message);
      return 3;
    }
    if (xpack_cache_refusal(cache)) printf("refused %s\n", xpack_cache_refusal(cache));
  }
  int rc = 0;
  if (threads > 0) { /* every thread creates and runs every graph at once through the one cache */
    if (cache) bind_all(cache);
    worker* wk = calloc((size_t)threads, sizeof *wk);
    for (int t = 0; t < threads; t++) {
      wk[t].cache = cache;
      wk[t].only = only;
      pthread_create(&wk[t].thread, NULL, worker_main, &wk[t]);
    }
    for (int t = 0; t < threads; t++) pthread_join(wk[t].thread, NULL);
    int agree = 1;
    for (int t = 0; t < threads; t++) {
      rc |= wk[t].rc;
      agree &= strcmp(wk[t].hashes, wk[0].hashes) == 0;
    }
    printf("threads %d %s %s\n", threads, agree ? "agree" : "DISAGREE", wk[0].hashes);
    if (!agree) rc = 1;
    free(wk);
  } else {
    for (size_t k = 0; k < (size_t)repeat * demo_graph_count(); k++) {
      const size_t i = k % demo_graph_count();
      if (only && strcmp(only, demo_graph_name(i)) != 0) continue;
      char line[1024] = {0};
      if (run_graph(i, cache, 0, line, sizeof line) != 0) {
        fprintf(stderr, "xpack-subgraphs: running %s failed\n", demo_graph_name(i));
        rc = 1;
      }
      fputs(line, stdout);
    }
  }
  if (cache) {
    xpack_stats s;
    xpack_cache_stats(cache, &s);
    printf("stats lookups %llu hits %llu hits_after_packing %llu misses %llu misses_unbound %llu misses_not_found %llu "
           "misses_refused %llu refused_incompatible %llu refused_corrupt %llu refused_mismatch %llu refused_probe %llu "
           "refused_no_family %llu heap_fallbacks %llu heap_fallback_bytes %llu served_bytes %llu misses_reused %llu\n",
           (unsigned long long)s.lookups, (unsigned long long)s.hits, (unsigned long long)s.hits_after_packing,
           (unsigned long long)s.misses, (unsigned long long)s.misses_unbound, (unsigned long long)s.misses_not_found,
           (unsigned long long)s.misses_refused, (unsigned long long)s.refused_incompatible,
           (unsigned long long)s.refused_corrupt, (unsigned long long)s.refused_mismatch,
           (unsigned long long)s.refused_probe, (unsigned long long)s.refused_no_family, (unsigned long long)s.heap_fallbacks, (unsigned long long)s.heap_fallback_bytes,
           (unsigned long long)s.served_bytes, (unsigned long long)s.misses_reused);
    for (uint32_t i = 0; i < xpack_cache_family_count(cache); i++) {
      xpack_cache_family_info f;
      if (xpack_cache_family(cache, i, &f, NULL) != XPACK_OK) continue;
      printf("family %s | status %s hits %llu refused %llu | %s\n", f.name, xpack_family_refusal_name(f.refusal),
             (unsigned long long)f.hits, (unsigned long long)f.refused, f.reason ? f.reason : "");
    }
    xpack_cache_close(cache);
  }
  return rc;
}

int main(int argc, char** argv) {
  if (xnn_initialize(NULL) != xnn_status_success) {
    fprintf(stderr, "xpack-subgraphs: xnn_initialize failed\n");
    return 1;
  }
  int rc = 2;
  if (argc == 3 && strcmp(argv[1], "pack") == 0) rc = pack(argv[2]);
  else if (argc >= 2 && strcmp(argv[1], "run") == 0) rc = run(argc - 2, argv + 2);
  if (rc == 2) fprintf(stderr, "usage: xpack-subgraphs pack OUT.xpc | run [--cache FILE] [--read] [--probe-early] [--only NAME] "
                               "[--threads N | --repeat N]\n");
  demo_free_weights();
  return rc;
}
