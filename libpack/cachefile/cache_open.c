/* Mapping a cache file and opening its view: see cache_open.h. */
#include "cachefile/cache_open.h"

#include <string.h>

xpack_status xp_file_open(xp_file* f, const char* path, int allow_transport, xpack_error* err) {
  memset(f, 0, sizeof *f);
  xpack_status st = xp_map_file(path, &f->map, err);
  if (st != XPACK_OK) return st;
  /* An empty file maps to no memory; the view still needs a base to report "not an xpack cache". */
  static const uint8_t kEmpty[1];
  st = xp_view_open(&f->view, f->map.data ? f->map.data : kEmpty, f->map.size, path, allow_transport, err);
  if (st != XPACK_OK) xp_file_close(f);
  return st;
}

int xp_file_is_mapped(const xp_file* f) { return f->map.data != NULL; }

void xp_file_close(xp_file* f) {
  xp_unmap_file(&f->map);
  memset(f, 0, sizeof *f);
}
