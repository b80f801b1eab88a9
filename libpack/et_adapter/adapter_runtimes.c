/* Runtimes created with an attached cache's provider, and caches detached while some existed: see adapter_runtimes.h. */
#include "et_adapter/adapter_runtimes.h"

#include <pthread.h>
#include <stdlib.h>

/* Defined by et_adapter_delete_wrap.c, whose __wrap_xnn_delete_runtime is an alias of it. Weak: a link that does not
 * include that object (no wrap, or an app's own stand-in) must not be made to. */
extern enum xnn_status xp_adapter_delete_stand_in(xnn_runtime_t runtime) __attribute__((weak));

typedef struct live_runtime {
  xnn_runtime_t runtime;
  xpack_cache* cache;
  uint64_t claim; /* 0 until its deletion starts: then the deletion's own number */
} live_runtime;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static live_runtime* g_live;
static size_t g_live_count, g_live_capacity;
static uint64_t g_claims; /* numbers deletions, so that a record is found again by its claim, not by an address
                             XNNPACK may have handed to a new runtime meanwhile */
static xpack_cache** g_retired; /* detached, closed with their last runtime */
static size_t g_retired_count, g_retired_capacity;
static xpack_cache* g_unrecorded; /* a runtime of it could not be recorded: never closed */

bool xp_adapter_deletes_tracked(void) {
  /* Under -Wl,--wrap=xnn_delete_runtime every reference to xnn_delete_runtime, an address taken here included,
   * resolves to __wrap_xnn_delete_runtime: the adapter's stand-in only when its object was linked (an app may define
   * its own, which reports nothing here). Read through volatile, so that the compiler does not decide that two
   * functions of different names never share an address. */
  volatile uintptr_t called = (uintptr_t)&xnn_delete_runtime, ours = (uintptr_t)&xp_adapter_delete_stand_in;
  return ours != 0 && called == ours;
}

static bool grow(void** array, size_t* capacity, size_t count, size_t element) {
  if (count < *capacity) return true;
  const size_t more = *capacity ? *capacity * 2 : 16;
  void* grown = realloc(*array, more * element);
  if (grown == NULL) return false;
  *array = grown;
  *capacity = more;
  return true;
}

void xp_adapter_runtime_created(xnn_runtime_t runtime, xpack_cache* cache) {
  if (!xp_adapter_deletes_tracked()) return; /* never removed: a list that would only grow */
  pthread_mutex_lock(&g_lock);
  if (grow((void**)&g_live, &g_live_capacity, g_live_count, sizeof *g_live)) {
    g_live[g_live_count++] = (live_runtime){runtime, cache, 0};
  } else {
    g_unrecorded = cache;
  }
  pthread_mutex_unlock(&g_lock);
}

static size_t runtimes_of(const xpack_cache* cache) {
  size_t n = 0;
  for (size_t i = 0; i < g_live_count; i++) n += g_live[i].cache == cache;
  return n;
}

uint64_t xp_adapter_runtime_deleting(xnn_runtime_t runtime) {
  uint64_t claim = 0;
  pthread_mutex_lock(&g_lock);
  for (size_t i = 0; i < g_live_count; i++) {
    if (g_live[i].runtime == runtime && g_live[i].claim == 0) {
      claim = g_live[i].claim = ++g_claims;
      break;
    }
  }
  pthread_mutex_unlock(&g_lock);
  return claim;
}

void xp_adapter_runtime_deleted(uint64_t claim) {
  if (claim == 0) return;
  xpack_cache* close = NULL;
  pthread_mutex_lock(&g_lock);
  for (size_t i = 0; i < g_live_count; i++) {
    if (g_live[i].claim != claim) continue;
    xpack_cache* cache = g_live[i].cache;
    g_live[i] = g_live[--g_live_count];
    for (size_t r = 0; r < g_retired_count && cache != g_unrecorded; r++) {
      if (g_retired[r] == cache && runtimes_of(cache) == 0) {
        g_retired[r] = g_retired[--g_retired_count];
        close = cache;
        break;
      }
    }
    break;
  }
  pthread_mutex_unlock(&g_lock);
  xpack_cache_close(close); /* outside the lock: closing joins the cache's probe thread, if any */
}

bool xp_adapter_retire(xpack_cache* cache) {
  if (cache == NULL || !xp_adapter_deletes_tracked()) return false;
  bool keep = false;
  pthread_mutex_lock(&g_lock);
  if (cache == g_unrecorded) {
    keep = true; /* never closed: there is no list to close it from */
  } else if (runtimes_of(cache) > 0) {
    keep = grow((void**)&g_retired, &g_retired_capacity, g_retired_count, sizeof *g_retired);
    if (keep) {
      g_retired[g_retired_count++] = cache;
    } else {
      g_unrecorded = cache; /* no room to remember it: left open for good rather than closed under its runtimes */
      keep = true;
    }
  }
  pthread_mutex_unlock(&g_lock);
  return keep;
}
