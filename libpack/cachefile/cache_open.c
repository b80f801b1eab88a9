/* Mapping a cache file and opening its view: see cache_open.h. */
#include "cachefile/cache_open.h"

#include <string.h>

#include "cachefile/string_sharing.h"
#include "common/error.h"
#include "xpc_format.h"

/* XP_STRING_BYTES_PER_STRS_BYTE (string_sharing.h): refused before any tool reads the records one by one. */
static xpack_status check_string_sharing(const xp_view* v, const char* path, xpack_error* err) {
  xp_string_sharing at;
  if (!xp_view_strings_overshared(v, &at)) return XPACK_OK;
  char tag[5];
  xp_tag_text(at.tag, tag);
  const int entries = at.tag == XPC_TAG_ENTRIES; /* the first table counted: nothing before it */
  const char* records = entries ? "entries" : "records";
  const char* kind = entries ? "identity" : "name";
  return xp_fail(err, XPACK_ERR_UNSUPPORTED,
                 "%s: table %s at offset %llu: %s 0 to %llu (of %llu)%s already name %llu bytes of %s strings, more "
                 "than %u times the %llu bytes of STRS: the %s share their %s strings far more than any writer makes "
                 "them; refused, as reading each one's strings would cost time and memory out of proportion to the file",
                 path, tag, (unsigned long long)at.offset, records, (unsigned long long)at.record,
                 (unsigned long long)at.records, entries ? "" : " with the entries and records before them",
                 (unsigned long long)at.named, kind, XP_STRING_BYTES_PER_STRS_BYTE, (unsigned long long)v->strings.count,
                 records, kind);
}

static xpack_status check_transport_expansion(const xp_view* v, uint64_t size, const char* path, xpack_error* err) {
  if (!(v->flags & XPC_FLAG_TRANSPORT)) return XPACK_OK;
  const uint64_t limit = size > XP_TRANSPORT_FLOOR_BYTES / XP_TRANSPORT_EXPANSION_MAX
                             ? (size > UINT64_MAX / XP_TRANSPORT_EXPANSION_MAX ? UINT64_MAX : size * XP_TRANSPORT_EXPANSION_MAX)
                             : XP_TRANSPORT_FLOOR_BYTES;
  const uint64_t declared = xp_view_region_bytes(v);
  if (declared > limit) {
    return xp_fail(err, XPACK_ERR_UNSUPPORTED,
                   "%s: table REGN at offset %llu: its %llu regions declare %llu bytes of content, past the limit of "
                   "%llu bytes (%u times the file's %llu bytes, and at least 64 MiB: FORMAT.md 9.2); frames that "
                   "expand so far are no packed weights, and none is decoded",
                   path, (unsigned long long)v->regions.offset, (unsigned long long)v->regions.count,
                   (unsigned long long)declared, (unsigned long long)limit, XP_TRANSPORT_EXPANSION_MAX,
                   (unsigned long long)size);
  }
  return XPACK_OK;
}

/* Opens the view over the mapping f->map from its byte f->delta on, size bytes. */
static xpack_status open_view(xp_file* f, uint64_t size, const char* name, int allow_transport, xpack_error* err) {
  /* An empty file maps to no memory; the view still needs a base to report "not an xpack cache". */
  static const uint8_t kEmpty[1];
  xpack_status st = xp_view_open(&f->view, f->map.data ? f->map.data + f->delta : kEmpty, size, name, allow_transport, err);
  if (st == XPACK_OK) st = check_string_sharing(&f->view, name, err);
  if (st == XPACK_OK) st = check_transport_expansion(&f->view, size, name, err);
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
