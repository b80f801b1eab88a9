/* The runtimes the adapter's wrapper created with an attached cache's provider, so that detaching while some still
 * exist leaves the cache open until the last is deleted (xpack_et_adapter_detach): their packed weights are the
 * cache's mapping and heap. Counted only where xnn_delete_runtime calls reach the adapter's own stand-in
 * (-Wl,--wrap=xnn_delete_runtime, which xpack::et_adapter adds): without it no deletion is seen, nothing is
 * recorded, and detach closes the cache at once, as before. Thread safe. */
#ifndef XPACK_ET_ADAPTER_RUNTIMES_H
#define XPACK_ET_ADAPTER_RUNTIMES_H

#include <stdbool.h>
#include <stdint.h>

#include <xnnpack.h>

#include "xpack_loader.h"

/* Whether this process's xnn_delete_runtime calls reach the adapter's stand-in (et_adapter_delete_wrap.c): the link
 * wrapped it, and no stand-in of the app's own took its place. */
bool xp_adapter_deletes_tracked(void);

/* Records a runtime created with `cache`'s provider (nothing when deletions are not tracked). When it cannot be
 * recorded (no memory), `cache` is never closed: a runtime of it might outlive a detach. */
void xp_adapter_runtime_created(xnn_runtime_t runtime, xpack_cache* cache);

/* The stand-in's two halves around XNNPACK's deletion. deleting: claims the record of `runtime` (any runtime: xpack's
 * own and other runtimes were never recorded, and get 0) before XNNPACK frees it, after which its address may be
 * handed to a new runtime at once. deleted: forgets that record, and closes its cache when it was the last runtime
 * of a cache detached before. */
uint64_t xp_adapter_runtime_deleting(xnn_runtime_t runtime);
void xp_adapter_runtime_deleted(uint64_t claim);

/* At detach: whether `cache` must stay open, because runtimes created with its provider still exist (or one
 * could not be recorded); it is then closed by xp_adapter_runtime_deleted when the last of them is deleted.
 * False when deletions are not tracked or no runtime of it exists: the caller closes it. */
bool xp_adapter_retire(xpack_cache* cache);

#endif
