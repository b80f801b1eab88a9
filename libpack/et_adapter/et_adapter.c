/* xpack's loader inside stock ExecuTorch: see xpack_et_adapter.h. */
#include "xpack_et_adapter.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xpack_executorch.h"
#include "xpack_replay.h"

#include "common/error.h"
#include "et_adapter/adapter_runtimes.h"

/* Published (substituted by the wrapper, on whichever thread creates a runtime) only once attach is complete: a
 * release store, so that a thread that loads it sees the cache as attach left it. */
static _Atomic(xpack_cache*) g_cache;
/* Held by attach and detach: one attach at a time, so that two threads cannot both find nothing attached, and a
 * failing attach releases its own cache. Not held by the wrapper, which only loads g_cache. */
static pthread_mutex_t g_attach_lock = PTHREAD_MUTEX_INITIALIZER;
static xpack_cache* g_opening;
static xpack_et_program* g_program;
static xpack_et_ptd** g_ptds;
static size_t g_ptd_count;

static void release(void) {
  for (size_t i = 0; i < g_ptd_count; i++) xpack_et_ptd_close(g_ptds[i]);
  free(g_ptds);
  g_ptds = NULL;
  g_ptd_count = 0;
  xpack_et_program_close(g_program);
  g_program = NULL;
  xpack_cache* attached = atomic_exchange_explicit(&g_cache, NULL, memory_order_acq_rel);
  /* ExecuTorch's runtimes created with it read its mapping and heap until deleted: a cache some still use is closed
   * with the last of them (where deletions are seen: adapter_runtimes.h). */
  if (!xp_adapter_retire(attached)) xpack_cache_close(attached ? attached : g_opening);
  g_opening = NULL;
}

static xpack_status attach_opened(const void* pte, size_t pte_size, const void* const* ptds, const size_t* ptd_sizes,
                                  size_t ptd_count, xpack_error* err);

xpack_status xpack_et_adapter_attach(const char* cache_path, unsigned flags, const void* pte, size_t pte_size,
                                     const void* const* ptds, const size_t* ptd_sizes, size_t ptd_count,
                                     xpack_error* err) {
  if (!cache_path) return xp_fail(err, XPACK_ERR_ARG, "xpack_et_adapter_attach: NULL argument");
  size_t chosen;
  return xpack_et_adapter_attach_best(&cache_path, 1, flags, pte, pte_size, ptds, ptd_sizes, ptd_count, &chosen,
                                      NULL, err);
}

xpack_status xpack_et_adapter_attach_best(const char* const* cache_paths, size_t cache_count, unsigned flags,
                                          const void* pte, size_t pte_size, const void* const* ptds,
                                          const size_t* ptd_sizes, size_t ptd_count, size_t* chosen,
                                          xpack_cache_candidate* candidates, xpack_error* err) {
  if (!cache_paths || !cache_count || !chosen || !pte || (ptd_count && (!ptds || !ptd_sizes)))
    return xp_fail(err, XPACK_ERR_ARG, "xpack_et_adapter_attach: NULL argument or no cache path");
  pthread_mutex_lock(&g_attach_lock);
  xpack_status st = XPACK_OK;
  if (atomic_load_explicit(&g_cache, memory_order_acquire)) {
    st = xp_fail(err, XPACK_ERR_ARG, "xpack_et_adapter_attach: already attached");
  } else {
    const xpack_open_limits limits = {.small_cache_bytes = XPACK_ET_ADAPTER_SMALL_CACHE_BYTES, .program = pte,
                                      .program_size = pte_size};
    /* Choosing decides the candidates' packing families: their probes are xpack's own runtimes, which the
     * wrapper passes through (xpack_creating_own_runtime). It decides them at once, so a probe thread
     * (XPACK_OPEN_PROBE_EARLY) would only be started to be waited for: without it attach took 0.05 to 0.15 ms
     * less (docs/BENCHMARKS.md, "The adapter opens its cache without a probe thread"). */
    /* Sizing the weights runs XNNPACK: an app outside ExecuTorch (which initializes it as its backend registers) got
     * "uninitialized" blamed on a node of its program. */
    st = xpack_initialize_xnnpack(err);
    if (st == XPACK_OK) {
      st = xpack_cache_open_best_limits(cache_paths, cache_count, flags & ~XPACK_OPEN_PROBE_EARLY, &limits,
                                        &g_opening, chosen, candidates, err);
    }
    if (st == XPACK_OK) st = attach_opened(pte, pte_size, ptds, ptd_sizes, ptd_count, err);
  }
  pthread_mutex_unlock(&g_attach_lock);
  return st;
}

xpack_status xpack_et_adapter_attach_cache(xpack_cache* cache, const void* pte, size_t pte_size,
                                           const void* const* ptds, const size_t* ptd_sizes, size_t ptd_count,
                                           xpack_error* err) {
  pthread_mutex_lock(&g_attach_lock);
  xpack_status st;
  /* Already attached first: that cache stays the caller's, whatever else is wrong with the call (the header). */
  xpack_cache* attached = atomic_load_explicit(&g_cache, memory_order_acquire);
  if (attached) {
    /* The attached cache given again is the adapter's: an app that closed it on this error freed it under the
     * running runtimes (found by a review). */
    st = xp_fail(err, XPACK_ERR_ARG, attached == cache
                                         ? "xpack_et_adapter_attach_cache: this cache is the one attached: it stays "
                                           "the adapter's until xpack_et_adapter_detach (do not close it)"
                                         : "xpack_et_adapter_attach_cache: already attached");
  } else if (!cache || !pte || (ptd_count && (!ptds || !ptd_sizes))) {
    xpack_cache_close(cache); /* owned from this call on, as when the attach fails later */
    st = xp_fail(err, XPACK_ERR_ARG, "xpack_et_adapter_attach_cache: NULL cache, program or data");
  } else if ((st = xpack_initialize_xnnpack(err)) != XPACK_OK) {
    xpack_cache_close(cache);
  } else {
    g_opening = cache;
    st = attach_opened(pte, pte_size, ptds, ptd_sizes, ptd_count, err);
  }
  pthread_mutex_unlock(&g_attach_lock);
  return st;
}

/* An XNNPACK delegate of the program, parsed once for both what binding needs (its constants' identities) and
 * what sizing needs (the graph): parsing is most of either on programs of many nodes. */
typedef struct parsed_delegate {
  xpack_et_xnn_graph* graph;
  xpack_et_delegate_summary summary;
} parsed_delegate;

static void free_delegates(parsed_delegate* delegates, size_t count) {
  for (size_t i = 0; i < count; i++) {
    xpack_et_delegate_summary_clear(&delegates[i].summary);
    xpack_et_xnn_graph_free(delegates[i].graph);
  }
  free(delegates);
}

/* Parses and summarizes every XNNPACK delegate of g_program; *out holds *count of them, even on failure. */
static xpack_status parse_delegates(const xpack_et_named_sources* sources, parsed_delegate** out, size_t* count,
                                    xpack_error* err) {
  const xpack_et_program_info* program = xpack_et_program_get_info(g_program);
  *count = 0;
  *out = calloc(program->xnnpack_delegate_count ? program->xnnpack_delegate_count : 1, sizeof **out);
  if (*out == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "xpack_et_adapter_attach: out of memory");
  xpack_status st = XPACK_OK;
  for (size_t m = 0; st == XPACK_OK && m < program->method_count; m++) {
    for (size_t d = 0; st == XPACK_OK && d < program->methods[m].delegate_count; d++) {
      if (!program->methods[m].delegates[d].is_xnnpack || *count == program->xnnpack_delegate_count) continue;
      parsed_delegate* p = &(*out)[*count];
      st = xpack_et_xnn_graph_open(g_program, m, d, &p->graph, err);
      if (st != XPACK_OK) break;
      ++*count;
      st = xpack_et_summarize_graph(p->graph, sources, &p->summary, err);
    }
  }
  return st;
}

typedef struct bound_constant {
  const uint8_t* data;
  const char* identity; /* the summary's */
  bool ambiguous;
} bound_constant;

static int by_data(const void* a, const void* b) {
  const bound_constant *x = a, *y = b;
  return x->data < y->data ? -1 : x->data > y->data;
}

/* Binds every constant of every XNNPACK delegate at once, before ExecuTorch creates any runtime: a weight two
 * delegates pack otherwise (their identities differ, e.g. other activation quantizations) is bound as
 * ambiguous, since the last binding would otherwise name it for both. */
static xpack_status bind_constants(const parsed_delegate* delegates, size_t count, xpack_error* err) {
  size_t total = 0;
  for (size_t d = 0; d < count; d++) total += delegates[d].summary.constant_count;
  bound_constant* all = calloc(total ? total : 1, sizeof *all);
  if (all == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "xpack_et_adapter_attach: out of memory");
  size_t n = 0;
  for (size_t d = 0; d < count; d++) {
    const xpack_et_delegate_summary* ds = &delegates[d].summary;
    for (size_t c = 0; c < ds->constant_count; c++) {
      const xpack_et_constant_summary* cs = &ds->constants[c];
      if (cs->data && cs->identity) all[n++] = (bound_constant){cs->data, cs->identity, cs->ambiguous};
    }
  }
  qsort(all, n, sizeof *all, by_data);
  xpack_status st = XPACK_OK;
  for (size_t i = 0; i < n && st == XPACK_OK;) {
    size_t end = i + 1;
    bool ambiguous = all[i].ambiguous;
    for (; end < n && all[end].data == all[i].data; end++) {
      ambiguous |= all[end].ambiguous || strcmp(all[end].identity, all[i].identity) != 0;
    }
    /* An identity longer than any binding takes names nothing either (XPACK_IDENTITY_MAX_LEN). */
    ambiguous |= strlen(all[i].identity) > XPACK_IDENTITY_MAX_LEN;
    const char* identity = ambiguous ? XPACK_IDENTITY_AMBIGUOUS : all[i].identity;
    st = xpack_cache_bind(g_opening, all[i].data, identity, strlen(identity), err);
    i = end;
  }
  free(all);
  return st;
}

/* Binds, sizes and probes g_opening for the program; on failure closes it. */
static xpack_status attach_opened(const void* pte, size_t pte_size, const void* const* ptds, const size_t* ptd_sizes,
                                  size_t ptd_count, xpack_error* err) {
  xpack_status st = XPACK_OK;
  if (xpack_cache_entry_count(g_opening) == 0) { /* skipped unread (XPACK_OPEN_SKIP_SMALL or _COLD): nothing to find */
    atomic_store_explicit(&g_cache, g_opening, memory_order_release);
    g_opening = NULL;
    return XPACK_OK;
  }
  xpack_cache_prefetch(g_opening); /* a small cold cache is read while the program is summarized and replayed */
  /* The reader borrows the app's bytes: every pointer it resolves is an address ExecuTorch hands XNNPACK. */
  st = xpack_et_program_open_memory(pte, pte_size, "program", &g_program, err);
  if (st == XPACK_OK && ptd_count) {
    g_ptds = calloc(ptd_count, sizeof *g_ptds);
    if (!g_ptds) st = xp_fail(err, XPACK_ERR_NOMEM, "xpack_et_adapter_attach: out of memory");
    for (size_t i = 0; st == XPACK_OK && i < ptd_count; i++) {
      st = xpack_et_ptd_open_memory(ptds[i], ptd_sizes[i], "data", &g_ptds[i], err);
      if (st == XPACK_OK) g_ptd_count = i + 1;
    }
  }
  parsed_delegate* delegates = NULL;
  size_t delegate_count = 0;
  xpack_et_named_sources sources = {g_program, (const xpack_et_ptd* const*)g_ptds, g_ptd_count};
  if (st == XPACK_OK) st = parse_delegates(&sources, &delegates, &delegate_count, err);
  if (st == XPACK_OK) st = bind_constants(delegates, delegate_count, err);
  /* What XNNPACK reads for every key: without it the loader serves nothing (xpack_cache_bind_size). Sized
   * before the wrapper substitutes xpack's provider, like the probes below; not for a file refused whole,
   * whose look-ups are all refused anyway (still counted: the constants are bound). */
  for (size_t d = 0; st == XPACK_OK && xpack_cache_refusal(g_opening) == NULL && d < delegate_count; d++) {
    st = xpack_replay_size_weights_for_cache(delegates[d].graph, &sources, g_opening, err);
  }
  free_delegates(delegates, delegate_count);
  /* Decide every packing family now, so that no look-up waits for a probe while ExecuTorch creates its
   * runtimes. */
  for (uint32_t i = 0; st == XPACK_OK && i < xpack_cache_family_count(g_opening); i++) {
    xpack_cache_family_info info;
    st = xpack_cache_family(g_opening, i, &info, err);
  }
  if (st != XPACK_OK) {
    release();
    return st;
  }
  atomic_store_explicit(&g_cache, g_opening, memory_order_release);
  g_opening = NULL;
  return XPACK_OK;
}

struct xnn_weights_cache_provider* xpack_et_adapter_provider(void) {
  xpack_cache* cache = atomic_load_explicit(&g_cache, memory_order_acquire);
  return cache ? xpack_cache_provider(cache) : NULL;
}

xpack_cache* xpack_et_adapter_cache(void) { return atomic_load_explicit(&g_cache, memory_order_acquire); }

void xpack_et_adapter_runtime_created(xnn_runtime_t runtime) {
  xpack_cache* cache = xpack_et_adapter_cache();
  if (runtime != NULL && cache != NULL && xpack_cache_provider(cache) != NULL) xp_adapter_runtime_created(runtime, cache);
}

void xpack_et_adapter_detach(void) {
  pthread_mutex_lock(&g_attach_lock);
  release();
  pthread_mutex_unlock(&g_attach_lock);
}
