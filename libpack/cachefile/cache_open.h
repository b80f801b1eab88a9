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
  xp_view view; /* over map (from its byte `delta` on); valid until xp_file_close */
  uint64_t delta;
} xp_file;


/* A transport file's regions decode, all together, to at most XP_TRANSPORT_EXPANSION_MAX times the file's size,
 * or to XP_TRANSPORT_FLOOR_BYTES whatever the file's size (FORMAT.md 9.2). xpack's own frames of real packed
 * weights decode to 1.1 to 10.5 times their size; a zstd RLE block decodes 4 bytes to 128 KiB, and a 33 KB file
 * of them declaring 1 GiB had inflate write 1 GiB and verify decode it. The compressor keeps to it: where the
 * regions hold more than the floor, a region that compresses further than the ratio is stored in raw blocks. */
#define XP_TRANSPORT_EXPANSION_MAX 1024u
#define XP_TRANSPORT_FLOOR_BYTES (64ull << 20)

/* Maps path and opens its view (allow_transport as for xp_view_open), then counts the string bytes its records
 * name (xp_view_strings_overshared: O(records), lengths only), and, of a transport file, the bytes its regions
 * declare (O(regions)). On failure nothing stays mapped.
 * Errors: XPACK_ERR_IO (the mapping), then those of xp_view_open, then XPACK_ERR_UNSUPPORTED when the
 * records name more than XP_STRING_BYTES_PER_STRS_BYTE times the bytes of STRS, or when a transport file's
 * regions declare more than its expansion limit (above). */
xpack_status xp_file_open(xp_file* f, const char* path, int allow_transport, xpack_error* err);

/* As xp_file_open, on the bytes [offset, offset + size) of the open file fd (a cache stored inside another
 * file, e.g. an archive's member), named `name` in messages; fd stays the caller's. Errors: XPACK_ERR_IO (fd
 * is not a regular file), XPACK_ERR_TRUNCATED (the range ends past the file), then those of xp_file_open. */
xpack_status xp_file_open_range(xp_file* f, int fd, uint64_t offset, uint64_t size, const char* name,
                                int allow_transport, xpack_error* err);

/* Whether the view is over a file mapping (an empty file has none), so that its pages may be released. */
int xp_file_is_mapped(const xp_file* f);

/* Unmaps the file. Safe on a file whose open failed. */
void xp_file_close(xp_file* f);

#endif
