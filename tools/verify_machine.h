/* verify, for this machine: would this process's loader serve the cache's entries here? The file as a
 * whole (architecture, alignment, XNNPACK build) and each packing family (its probe packed with this
 * XNNPACK on this CPU). Running `xpack verify` on a target device is how a cache is checked for it. */
#ifndef XPACK_TOOLS_VERIFY_MACHINE_H
#define XPACK_TOOLS_VERIFY_MACHINE_H

#include <stdint.h>

#include "cli_cache_source.h"
#include "json.h"

typedef struct machine_verdict {
  int checked;               /* 0: not checked (transport form, or the file does not open) */
  uint64_t entries;          /* entries in the file */
  uint64_t entries_refused;  /* entries this machine's loader would refuse (whole file, family, or none) */
  uint64_t families_refused; /* families refused here */
  xpack_error error;         /* XPACK_ERR_NOMEM: the check could not be made (nothing was reported); else OK */
} machine_verdict;

/* Checks the cache `source` names for this machine and reports it: as text on stdout, or as the members "machine": {...}
 * of the open JSON object j (j == NULL: text). */
void verify_for_this_machine(const cli_cache_source* source, json* j, machine_verdict* out);

#endif
