/* Family probes: pack a family's canonical weights with this process's XNNPACK and hash the result
 * (docs/FORMAT.md, section 5.8). The writer records the hash per family; the loader compares it with
 * its own before serving any entry of the family.
 *
 * Probing creates a small XNNPACK runtime with a provider of its own. It needs xnn_initialize (done
 * here if the caller has not), touches no state of any caller's runtime or cache, and may therefore run
 * inside a weights-cache callback of another xnn_create_runtime_v4 (the loader does so on the first
 * look-up that finds an entry of a family). */
#ifndef XPACK_SRC_PROBE_H
#define XPACK_SRC_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "xpack_family.h"
#include "xpack_status.h"

/* What a probe found (FORMAT.md 5.8.2): how this process packs the family, and how XNNPACK keys it. */
typedef struct xp_probe_result {
  uint64_t hash; /* XXH3-64 of the packed bytes */
  uint64_t keys; /* XXH3-64 of the look-up keys' seeds, never 0 (a 0 is recorded as 1) */
} xp_probe_result;

/* Runs the probe of `family` now.
 * Errors: XPACK_ERR_UNSUPPORTED (not a known family), XPACK_ERR_XNNPACK (XNNPACK cannot define or create
 * the probe here, e.g. no fp16 support on this CPU), XPACK_ERR_NOMEM; the message says which. */
xpack_status xp_probe_run(const xpack_family* family, xp_probe_result* out, xpack_error* err);

/* The probe of the family named name[0, len), run at most once per process and remembered (thread
 * safe: concurrent callers of one family wait for the first). Errors: as xp_probe_run, the same answer
 * every time. */
xpack_status xp_probe_family(const char* name, size_t len, xp_probe_result* out, xpack_error* err);

#endif
