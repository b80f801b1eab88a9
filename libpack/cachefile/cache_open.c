/* Mapping a cache file and opening its view: see cache_open.h. */
#include "cachefile/cache_open.h"

#include <string.h>

xpack_status xpc_file_open(xpc_file* f, const char* path, int allow_transport, xpack_error* err) {
  memset(f, 0, sizeof *f);
  xpack_status st = xp_map_file(path, &f->map, err);
  if (st != XPACK_OK) return st;
  /* An empty file maps to no memory; the view still needs a base to report "not an xpack cache". */
  static const uint8_t kEmpty[1];
  st = xpc_view_open(&f->view, f->map.data ? f->map.data : kEmpty, f->map.size, path, allow_transport, err);
  if (st != XPACK_OK) xpc_file_close(f);
  return st;
}

int xpc_file_is_mapped(const xpc_file* f) { return f->map.data != NULL; }

void xpc_file_close(xpc_file* f) {
  xp_unmap_file(&f->map);
  memset(f, 0, sizeof *f);
}
