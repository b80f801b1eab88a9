/* change_underneath: a cache file that changes while a process has it open.
 *
 *   change_underneath [--cache FILE [--read]] [--then COMMAND]
 *
 * Opens FILE (mapped, or read into memory with --read), then runs COMMAND through the shell while the
 * cache is open (the test renames another file over FILE, or truncates FILE in place), then creates and
 * runs every demo subgraph with the cache. Prints one line per graph with its look-ups, hits and output
 * hashes, and a total line. Without --cache it runs the graphs without a cache: the reference outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "demo_subgraphs.h"
#include "xpack.h"

static void bind_cache(void* ctx, const void* raw, const char* id) {
  if (xpack_cache_bind(ctx, raw, id, strlen(id), NULL) != XPACK_OK) abort();
}

/* Deterministic inputs: floats in [-1, 1) or bytes, from a seed per graph. */
static void fill(uint8_t* buf, size_t bytes, int is_float, uint64_t* seed) {
  for (size_t k = 0; k + (is_float ? 4 : 1) <= bytes; k += is_float ? 4 : 1) {
    *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
    if (is_float) {
      float f = (float)((int32_t)(*seed >> 40) - (1 << 23)) / (float)(1 << 23);
      memcpy(buf + k, &f, 4);
    } else {
      buf[k] = (uint8_t)(*seed >> 56);
    }
  }
}

static int run_graph(size_t index, xpack_cache* cache) {
  xpack_stats before, after;
  xpack_cache_stats(cache, &before);
  demo_graph g;
  if (demo_define(index, cache ? bind_cache : NULL, cache, &g) != xnn_status_success) return -1;
  xnn_runtime_t rt = NULL;
  enum xnn_status st = xnn_create_runtime_v4(g.subgraph, xpack_cache_provider(cache), NULL, NULL, 0, &rt);
  xpack_cache_unbind_all(cache);
  if (st != xnn_status_success) {
    xnn_delete_subgraph(g.subgraph);
    return -1;
  }
  struct xnn_external_value ext[2 * DEMO_MAX_EXTERNALS];
  size_t n = 0;
  uint64_t seed = 0x5eed + index;
  for (size_t i = 0; i < g.num_inputs; i++) {
    uint8_t* buf = calloc(1, g.inputs[i].bytes + XNN_EXTRA_BYTES);
    if (buf != NULL) fill(buf, g.inputs[i].bytes, g.inputs[i].is_float, &seed);
    ext[n++] = (struct xnn_external_value){g.inputs[i].id, buf};
  }
  for (size_t i = 0; i < g.num_outputs; i++) {
    ext[n++] = (struct xnn_external_value){g.outputs[i].id, calloc(1, g.outputs[i].bytes + XNN_EXTRA_BYTES)};
  }
  int rc = 0;
  for (size_t i = 0; i < n; i++) rc |= ext[i].data == NULL;
  if (rc || xnn_reshape_runtime(rt) != xnn_status_success || xnn_setup_runtime_v2(rt, n, ext) != xnn_status_success ||
      xnn_invoke_runtime(rt) != xnn_status_success) {
    rc = -1;
  } else {
    xpack_cache_stats(cache, &after);
    printf("graph %s lookups %llu hits %llu", g.name, (unsigned long long)(after.lookups - before.lookups),
           (unsigned long long)(after.hits - before.hits));
    for (size_t i = 0; i < g.num_outputs; i++) {
      printf(" output_xxh3 %016llx", (unsigned long long)XXH3_64bits(ext[g.num_inputs + i].data, g.outputs[i].bytes));
    }
    printf("\n");
  }
  for (size_t i = 0; i < n; i++) free(ext[i].data);
  xnn_delete_runtime(rt);
  xnn_delete_subgraph(g.subgraph);
  return rc;
}

int main(int argc, char** argv) {
  const char* path = NULL;
  const char* command = NULL;
  unsigned flags = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--cache") == 0 && i + 1 < argc) path = argv[++i];
    else if (strcmp(argv[i], "--then") == 0 && i + 1 < argc) command = argv[++i];
    else if (strcmp(argv[i], "--read") == 0) flags |= XPACK_OPEN_READ;
    else {
      fprintf(stderr, "usage: change_underneath [--cache FILE [--read]] [--then COMMAND]\n");
      return 2;
    }
  }
  if (xnn_initialize(NULL) != xnn_status_success) {
    fprintf(stderr, "change_underneath: xnn_initialize failed\n");
    return 1;
  }
  xpack_cache* cache = NULL;
  if (path != NULL) {
    xpack_error err;
    if (xpack_cache_open(path, flags, &cache, &err) != XPACK_OK) {
      fprintf(stderr, "change_underneath: %s\n", err.message);
      return 3;
    }
  }
  if (command != NULL && system(command) != 0) {
    fprintf(stderr, "change_underneath: the command failed: %s\n", command);
    xpack_cache_close(cache);
    return 2;
  }
  fflush(stdout); /* what is printed so far survives if a graph below dies of SIGBUS */
  int rc = 0;
  for (size_t i = 0; i < demo_graph_count(); i++) {
    if (run_graph(i, cache) != 0) {
      fprintf(stderr, "change_underneath: running %s failed\n", demo_graph_name(i));
      rc = 1;
    }
    fflush(stdout);
  }
  xpack_stats s;
  xpack_cache_stats(cache, &s);
  printf("total lookups %llu hits %llu misses %llu\n", (unsigned long long)s.lookups, (unsigned long long)s.hits,
         (unsigned long long)s.misses);
  xpack_cache_close(cache);
  demo_free_weights();
  return rc;
}
