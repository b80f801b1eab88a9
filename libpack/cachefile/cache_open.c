/* Mapping a cache file and opening its view: see cache_open.h. */
#include "cachefile/cache_open.h"

#include <string.h>

#include "common/error.h"
#include "xpc_format.h"

/* The length of the string of STRS at offset, or 0 when there is none there (verify reports it). */
static uint64_t identity_length(const xp_view* v, uint32_t offset) {
  const char* s;
  uint32_t len;
  return offset != XPC_NONE && xp_view_string(v, offset, &s, &len) == 0 ? len : 0;
}

/* XP_IDENTITY_BYTES_PER_STRS_BYTE: refused before any tool reads the identities entry by entry. */
static xpack_status check_identity_sharing(const xp_view* v, const char* path, xpack_error* err) {
  const uint64_t limit = XP_IDENTITY_BYTES_PER_STRS_BYTE * v->strings.count; /* STRS < 2^32 bytes (open) */
  uint64_t named = 0;
  for (uint64_t i = 0; i < v->entries.count; i++) {
    xp_entry e;
    xp_view_entry(v, i, &e);
    named += identity_length(v, e.kernel) + identity_length(v, e.bias);
    if (named > limit) {
      return xp_fail(err, XPACK_ERR_UNSUPPORTED,
                     "%s: table ENTR at offset %llu: entries 0 to %llu (of %llu) already name %llu bytes of identity "
                     "strings, more than %u times the %llu bytes of STRS: the entries share their identity strings "
                     "far more than any writer makes them; refused, as reading each entry's identities would cost "
                     "time and memory out of proportion to the file",
                     path, (unsigned long long)v->entries.offset, (unsigned long long)i,
                     (unsigned long long)v->entries.count, (unsigned long long)named, XP_IDENTITY_BYTES_PER_STRS_BYTE,
                     (unsigned long long)v->strings.count);
    }
  }
  return XPACK_OK;
}

/* Opens the view over the mapping f->map from its byte f->delta on, size bytes. */
static xpack_status open_view(xp_file* f, uint64_t size, const char* name, int allow_transport, xpack_error* err) {
  /* An empty file maps to no memory; the view still needs a base to report "not an xpack cache". */
  static const uint8_t kEmpty[1];
  xpack_status st = xp_view_open(&f->view, f->map.data ? f->map.data + f->delta : kEmpty, size, name, allow_transport, err);
  if (st == XPACK_OK) st = check_identity_sharing(&f->view, name, err);
  if (st != XPACK_OK) xp_file_close(f);
  return st;
}

xpack_status xp_file_open(xp_file* f, const char* path, int allow_transport, xpack_error* err) {
  memset(f, 0, sizeof *f);
  xpack_status st = xp_map_file(path, &f->map, err);
  if (st != XPACK_OK) return st;
  return open_view(f, f->map.size, path, allow_transport, err);
}

xpack_status xp_file_open_range(xp_file* f, int fd, uint64_t offset, uint64_t size, const char* name,
                                int allow_transport, xpack_error* err) {
  memset(f, 0, sizeof *f);
  xpack_status s = xp_check_range(fd, offset, size, name, err);
  if (s != XPACK_OK) return s;
  s = xp_map_range(fd, offset, size, name, &f->map, &f->delta, err);
  if (s != XPACK_OK) return s;
  return open_view(f, size, name, allow_transport, err);
}

int xp_file_is_mapped(const xp_file* f) { return f->map.data != NULL; }

void xp_file_close(xp_file* f) {
  xp_unmap_file(&f->map);
  memset(f, 0, sizeof *f);
}
