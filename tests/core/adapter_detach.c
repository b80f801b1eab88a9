/* Detaching the ExecuTorch adapter while runtimes created with its cache still exist (an app that tears down in the
 * wrong order, or ExecuTorch's Module destroyed after the detach): the cache stays open, and mapped, until the last
 * of them is deleted, and they compute what they computed before. A method run after detach once read the
 * unmapped cache and crashed (SIGSEGV; found by a review).
 *   adapter_detach PTE CACHE: every XNNPACK delegate of PTE is created through the wrapper with CACHE attached,
 *   the adapter detached, each runtime run (outputs as without a cache) and deleted: CACHE is unmapped with the
 *   last. Then an attach and detach with no runtime: unmapped at once.
 * Linked with xpack::et_adapter, whose link options wrap xnn_create_runtime_v4 and xnn_delete_runtime. Built with
 * ADAPTER_DETACH_UNTRACKED (adapter_detach_untracked), linked with the first wrap only, as an app whose own link line
 * lacks the second: deletions are not seen, so the runtimes are deleted before the detach, as the header then
 * requires, and detach closes the cache at once (were deletions taken for seen, it would stay open for good). Built
 * so and linked with adapter_own_delete.c too (adapter_detach_own_delete), both wraps: an app's own stand-in for
 * xnn_delete_runtime reports nothing to the adapter, which must notice that it is not its own. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "et_adapter/adapter_runtimes.h"
#include "expect.h"
#include "proc_maps.h"
#include "xpack_et_adapter.h"
#include "xpack_executorch.h"
#include "xpack_pipeline.h"
#include "xpack_replay.h"

enum { MAX_DELEGATES = 32 };


#ifndef ADAPTER_DETACH_UNTRACKED
/* A runtime's address handed to a new runtime of another cache between XNNPACK's free of the old one and the
 * adapter's bookkeeping of its deletion (any allocator may; a review showed it on threads with an allocator given
 * to xnn_initialize): the old runtime's record, claimed before the free, is the one forgotten, so that the detached
 * cache closes with its own last runtime and the new one's cache stays open (matched by address, the new record
 * went and the old cache leaked, and the new cache was unmapped under its runtime). Driven as the stand-ins drive
 * it, with made-up runtime addresses. */
static void address_reused(const char* cache_path) {
  xpack_cache *c1 = NULL, *c2 = NULL;
  xpack_error err;
  EXPECT(xpack_cache_open(cache_path, 0, &c1, &err) == XPACK_OK && xpack_cache_open(cache_path, 0, &c2, &err) == XPACK_OK);
  xnn_runtime_t r0 = (xnn_runtime_t)(uintptr_t)0x1000, r1 = (xnn_runtime_t)(uintptr_t)0x2000;
  xp_adapter_runtime_created(r0, c1);
  xp_adapter_runtime_created(r1, c1);
  EXPECT_MSG(xp_adapter_retire(c1), "%s", "a cache with live runtimes was not kept at its detach");
  const uint64_t claim1 = xp_adapter_runtime_deleting(r1); /* XNNPACK frees r1 now... */
  xp_adapter_runtime_created(r1, c2);                      /* ...a runtime of c2 gets its address... */
  xp_adapter_runtime_deleted(xp_adapter_runtime_deleting(r0)); /* ...and r0's deletion puts c2's record first */
  xp_adapter_runtime_deleted(claim1);                          /* c1's last: c1 closes */
  EXPECT_MSG(xp_adapter_retire(c2), "%s", "the new runtime's record went with the old one's deletion");
  xp_adapter_runtime_deleted(xp_adapter_runtime_deleting(r1)); /* c2's runtime: c2 closes with it */
  EXPECT_MSG(xp_adapter_runtime_deleting(r1) == 0, "%s", "a deleted runtime is still recorded");
}
#endif

typedef struct delegate {
  xpack_et_xnn_graph* graph;
  xpack_replay_subgraph replay;
  xpack_delegate_ref ref;
  xpack_run_result expected;
  xnn_runtime_t runtime;
} delegate;

int main(int argc, char** argv) {
  if (argc != 3 || xnn_initialize(NULL) != xnn_status_success) return 2;
  const char* cache_path = argv[2];
  const int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return 2;
  const void* pte = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  xpack_error err;
  xpack_et_program* program = NULL;
  if (pte == MAP_FAILED || xpack_et_program_open_memory(pte, (size_t)st.st_size, "program", &program, &err) != XPACK_OK) {
    return 2;
  }
  /* Defined over the program's own bytes, the addresses attach binds; outputs without a cache first. */
  static delegate d[MAX_DELEGATES];
  size_t n = 0;
  const xpack_et_program_info* info = xpack_et_program_get_info(program);
  const xpack_et_named_sources sources = {program, NULL, 0};
  for (size_t m = 0; m < info->method_count; m++) {
    for (size_t k = 0; k < info->methods[m].delegate_count && n < MAX_DELEGATES; k++) {
      if (!info->methods[m].delegates[k].is_xnnpack) continue;
      delegate* x = &d[n++];
      x->ref = (xpack_delegate_ref){0, m, k, "program.pte", "", NULL};
      EXPECT(xpack_et_xnn_graph_open(program, m, k, &x->graph, &err) == XPACK_OK);
      EXPECT(xpack_replay_define(x->graph, &sources, NULL, NULL, &x->replay, &err) == XPACK_OK);
      xnn_runtime_t plain = NULL;
      EXPECT(xpack_replay_create_runtime(&x->replay, NULL, &plain) == xnn_status_success);
      EXPECT(xpack_execute_runtime(plain, &x->replay, &x->ref, &x->expected, &err) == XPACK_OK);
      xnn_delete_runtime(plain);
    }
  }
  EXPECT(n > 0);
  if (failures) return 1;

  EXPECT(xpack_et_adapter_attach(cache_path, 0, pte, (size_t)st.st_size, NULL, NULL, 0, &err) == XPACK_OK);
  for (size_t i = 0; i < n; i++) { /* as ExecuTorch creates them: through the wrapper, with a provider of its own */
    EXPECT(xnn_create_runtime_v4(d[i].replay.subgraph, NULL, NULL, NULL, 0, &d[i].runtime) == xnn_status_success);
  }
  xpack_stats stats;
  xpack_cache_stats(xpack_et_adapter_cache(), &stats);
  EXPECT_MSG(stats.hits > 0 && stats.hits == stats.lookups, "%llu of %llu look-ups hit", (unsigned long long)stats.hits,
             (unsigned long long)stats.lookups);
#ifdef ADAPTER_DETACH_UNTRACKED
  for (size_t i = 0; i < n; i++) {
    xpack_run_result after;
    EXPECT(xpack_execute_runtime(d[i].runtime, &d[i].replay, &d[i].ref, &after, &err) == XPACK_OK);
    EXPECT(memcmp(after.output_hash, d[i].expected.output_hash, after.num_outputs * sizeof after.output_hash[0]) == 0);
    xnn_delete_runtime(d[i].runtime);
  }
  xpack_et_adapter_detach();
  EXPECT_MSG(!process_maps(cache_path), "%s", "without xnn_delete_runtime wrapped, detach left the cache mapped");
  printf("adapter_detach (deletions not seen): detach after the runtimes' deletion closed the cache: %s\n",
         failures ? "FAILED" : "ok");
#else
  xpack_et_adapter_detach();
  EXPECT(xpack_et_adapter_cache() == NULL);
  EXPECT_MSG(process_maps(cache_path), "%s", "the cache was unmapped while runtimes created with it exist");
  for (size_t i = 0; i < n; i++) {
    xpack_run_result after;
    EXPECT(xpack_execute_runtime(d[i].runtime, &d[i].replay, &d[i].ref, &after, &err) == XPACK_OK);
    EXPECT(after.num_outputs == d[i].expected.num_outputs &&
           memcmp(after.output_hash, d[i].expected.output_hash, after.num_outputs * sizeof after.output_hash[0]) == 0);
    xnn_delete_runtime(d[i].runtime);
    EXPECT_MSG(process_maps(cache_path) == (i + 1 < n), "after %zu of %zu runtimes deleted the cache is %s", i + 1, n,
               process_maps(cache_path) ? "still mapped" : "unmapped");
  }
  /* With no runtime left, detach closes at once. */
  EXPECT(xpack_et_adapter_attach(cache_path, 0, pte, (size_t)st.st_size, NULL, NULL, 0, &err) == XPACK_OK);
  EXPECT(process_maps(cache_path));
  xpack_et_adapter_detach();
  EXPECT_MSG(!process_maps(cache_path), "%s", "a detach with no runtime left the cache mapped");
  address_reused(cache_path);
  EXPECT_MSG(!process_maps(cache_path), "%s", "a cache retired under runtimes whose addresses were reused was not closed");
  printf("adapter_detach: %zu runtimes outlived the detach and computed as before; the cache closed with the last: %s\n",
         n, failures ? "FAILED" : "ok");
#endif
  for (size_t i = 0; i < n; i++) {
    xpack_replay_release(&d[i].replay);
    xpack_et_xnn_graph_free(d[i].graph);
  }
  xpack_et_program_close(program);
  munmap((void*)pte, (size_t)st.st_size);
  return failures ? 1 : 0;
}
