/* A cache file opened from a path: mapped read-only, then its checked view (cache_view.h) opened, with
 * every message naming the file. For the tools that read a whole file (dump, verify, compress, inflate,
 * export); the loader maps and opens its file itself, with the options of xpack_loader.h. */
#ifndef XPACK_SRC_CACHE_OPEN_H
#define XPACK_SRC_CACHE_OPEN_H

#include "cachefile/cache_view.h"
#include "common/file_map.h"
#include "xpack_status.h"

typedef struct xp_file {
  xp_file_map map;
  xp_view view; /* over map; valid until xp_file_close */
} xp_file;

/* Maps path and opens its view (allow_transport as for xp_view_open). On failure nothing stays mapped.
 * Errors: XPACK_ERR_IO (the mapping), then those of xp_view_open. */
xpack_status xp_file_open(xp_file* f, const char* path, int allow_transport, xpack_error* err);

/* Whether the view is over a file mapping (an empty file has none), so that its pages may be released. */
int xp_file_is_mapped(const xp_file* f);

/* Unmaps the file. Safe on a file whose open failed. */
void xp_file_close(xp_file* f);

#endif
