/* A whole file mapped read-only: the loader's cache mapping, and every reader of a cache or model file
 * (inspection, verification, transport, export, the ExecuTorch readers).
 * The mapping is MAP_SHARED: its pages are the page cache's own, clean and file-backed, shared by every
 * process that maps the file and never counted as this process's private memory. */
#ifndef XPACK_SRC_FILE_MAP_H
#define XPACK_SRC_FILE_MAP_H

#include <stdint.h>
#include <sys/types.h>

#include <sys/stat.h>

#include "xpack_status.h"

/* Opens path for reading and returns its descriptor in *fd and its size in *size (and, when st is not NULL,
 * what fstat says of it, e.g. its device and inode), refusing what is not a
 * regular file (a FIFO, a device, a folder) without blocking on it: a FIFO would otherwise hang the open
 * until a writer appears. The caller closes *fd. Errors: XPACK_ERR_IO, the message naming path and what it
 * is. */
xpack_status xp_open_regular(const char* path, int* fd, uint64_t* size, struct stat* st, xpack_error* err);

/* What a file of this mode is, for a message: "a FIFO", "a character device", "a block device", "a folder",
 * "a socket", or "not a regular file". */
const char* xp_file_kind(mode_t mode);

typedef struct xp_file_map {
  const uint8_t* data;
  uint64_t size;
} xp_file_map;

/* Maps path read-only (PROT_READ, MAP_SHARED). An empty file maps to data == NULL, size 0.
 * Errors: XPACK_ERR_IO. */
xpack_status xp_map_file(const char* path, xp_file_map* out, xpack_error* err);
/* As xp_map_file, then advises the kernel how the mapping will be read (madvise; a hint, never an error):
 * XP_MAP_SEQUENTIAL read ahead aggressively on faults, XP_MAP_WILLNEED start reading the whole file now. */
#define XP_MAP_SEQUENTIAL 0x1u
#define XP_MAP_WILLNEED 0x2u
xpack_status xp_map_file_advised(const char* path, unsigned advice, xp_file_map* out, xpack_error* err);
void xp_unmap_file(xp_file_map* map);
/* Checks that fd is a regular file holding the range [offset, offset + size) (a cache stored inside another
 * file, named `name` in messages). Errors: XPACK_ERR_IO (fstat fails, not a regular file, or the range ends past
 * what this process's off_t holds: 2 GiB where it has 32 bits), XPACK_ERR_TRUNCATED (the range ends past the file). */
xpack_status xp_check_range(int fd, uint64_t offset, uint64_t size, const char* name, xpack_error* err);

/* Maps the pages of the open file fd that hold its bytes [offset, offset + size) (a cache stored inside another
 * file), read-only and shared, registered for SIGBUS reports under name (xpack_mapped_file_at counting offsets
 * from the range's start); *delta is offset's distance from the
 * first page mapped, so the bytes start at out->data + *delta; released with xp_unmap_file. The caller has
 * checked that the range lies inside the file; size 0 maps nothing. Errors: XPACK_ERR_IO, XPACK_ERR_NOMEM
 * (out of address space). */
xpack_status xp_map_range(int fd, uint64_t offset, uint64_t size, const char* name, xp_file_map* out, uint64_t* delta,
                          xpack_error* err);
/* Takes over a read-only mapping of the whole of path (size bytes) made elsewhere, as xp_map_file would have
 * made it: registered for SIGBUS reports, released with xp_unmap_file. */
void xp_adopt_mapping(const char* path, const void* data, uint64_t size, xp_file_map* out);

/* madvise(advice) on the pages of mapping[0, mapping_size) that hold bytes [offset, offset + size), clipped to
 * the mapping. A hint: nothing when mapping is NULL or the range is empty, and madvise's failure is ignored. */
void xp_advise_range(const void* mapping, uint64_t mapping_size, uint64_t offset, uint64_t size, int advice);

#endif
