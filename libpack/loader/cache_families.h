/* The loader's verdict on each packing family of an open cache: served, or refused and why.
 *
 * A verdict is decided once per cache and family, on first need (the first look-up that finds an entry
 * of the family, or a caller asking for it), by comparing the file's probe hash with this process's
 * (probe.h, once per process). Nothing is decided at open, so opening costs nothing per family beyond
 * one zeroed slot; with XPACK_OPEN_PROBE_EARLY a thread of the cache's own decides every family in the
 * background from open on, and a look-up that needs one first waits for it or decides it itself. Thread
 * safe. */
#ifndef XPACK_SRC_CACHE_FAMILIES_H
#define XPACK_SRC_CACHE_FAMILIES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "cachefile/cache_view.h"
#include "xpack_loader.h"

typedef struct xp_family_slot {
  _Atomic int decided; /* set (release) once refusal, local_probe and reason are final */
  xpack_family_refusal refusal;
  uint64_t local_probe;
  uint64_t local_keys;
  char reason[640]; /* one sentence; not the size of a message: a file may have 4096 families */
  _Atomic uint64_t hits, refused;
} xp_family_slot;

typedef struct xp_cache_families {
  pthread_mutex_t lock; /* held while deciding (probes run under it) */
  xp_family_slot* slots;
  uint32_t count;
  /* XPACK_OPEN_PROBE_EARLY: the background prober, its view, and the request to stop it */
  pthread_t prober;
  int prober_running;
  _Atomic int stop_probing;
  const xp_view* view;
} xp_cache_families;

/* count: the FAMI records of the file (at most XPC_MAX_FAMILIES). Returns 0, or -1 when out of memory. */
int xp_families_init(xp_cache_families* families, uint32_t count);
/* Stops the background prober, if any (waits for the probe in progress), then frees the slots. */
void xp_families_destroy(xp_cache_families* families);

/* Starts deciding every family on a thread of its own (XPACK_OPEN_PROBE_EARLY), so that the probes overlap
 * what the caller does between open and runtime creation. view must outlive the families. Returns 0, or
 * -1 when no thread could be started: the families are then decided on first need, as without it. */
int xp_families_probe_early(xp_cache_families* families, const xp_view* view);

/* The slot of family `index` (< count), decided. file_refusal: why the whole file is refused, or NULL. */
xp_family_slot* xp_families_decide(xp_cache_families* families, const xp_view* view, const char* file_refusal,
                                   uint32_t index);

#endif
