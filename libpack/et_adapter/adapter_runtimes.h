/* The runtimes the adapter's wrapper created with an attached cache's provider, so that detaching while some still
 * exist leaves the cache open until the last is deleted (xpack_et_adapter_detach): their packed weights are the
 * cache's mapping and heap. Counted only where xnn_delete_runtime is wrapped too (-Wl,--wrap=xnn_delete_runtime,
 * which xpack::et_adapter adds): without it no deletion is seen, and detach closes the cache at once, as before.
 * Thread safe. */
#ifndef XPACK_ET_ADAPTER_RUNTIMES_H
#define XPACK_ET_ADAPTER_RUNTIMES_H

#include <stdbool.h>

#include <xnnpack.h>

#include "xpack_loader.h"

/* Whether this process's xnn_delete_runtime calls reach __wrap_xnn_delete_runtime (the link wrapped it). */
bool xp_adapter_deletes_tracked(void);

/* Records a runtime created with `cache`'s provider. When it cannot be recorded (no memory), `cache` is never
 * closed: a runtime of it might outlive a detach. */
void xp_adapter_runtime_created(xnn_runtime_t runtime, xpack_cache* cache);

/* Forgets a deleted runtime (any: xpack's own and the app's other runtimes were never recorded), and closes its
 * cache when it was the last runtime of a cache detached before. */
void xp_adapter_runtime_deleted(xnn_runtime_t runtime);

/* At detach: whether `cache` must stay open, because runtimes created with its provider still exist (or one
 * could not be recorded); it is then closed by xp_adapter_runtime_deleted when the last of them is deleted.
 * False when deletions are not tracked or no runtime of it exists: the caller closes it. */
bool xp_adapter_retire(xpack_cache* cache);

#endif
