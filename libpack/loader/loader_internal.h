/* What other parts of the loader library may see of an open cache. */
#ifndef XPACK_SRC_LOADER_INTERNAL_H
#define XPACK_SRC_LOADER_INTERNAL_H

#include <stdbool.h>

#include "cachefile/cache_view.h"
#include "xpack_loader.h"

/* The validated view of the cache's file; valid until xpack_cache_close. Empty for a skipped file. */
const xp_view* xp_cache_view(const xpack_cache* cache);

/* Whether XPACK_OPEN_SKIP_SMALL or XPACK_OPEN_SKIP_COLD skipped the file unread. */
bool xp_cache_skipped(const xpack_cache* cache);

#endif
