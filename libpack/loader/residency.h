/* Whether a file is wholly in the page cache, asked without reading it: XPACK_OPEN_SKIP_COLD's check
 * (loader.c). It runs on every start of an app that passes the flag, so it costs as few system calls as the
 * kernel allows: cachestat (Linux 6.5 and later) on a descriptor, else a mapping and mincore. */
#ifndef XPACK_SRC_RESIDENCY_H
#define XPACK_SRC_RESIDENCY_H

#include <stdint.h>
#include <sys/types.h>

typedef enum xp_residency {
  XP_RESIDENCY_UNKNOWN, /* not asked: the file could not be opened, or is no longer what the caller's stat saw */
  XP_RESIDENT,          /* every page of the file is in the page cache */
  XP_NOT_RESIDENT       /* at least one page is not */
} xp_residency;

typedef struct xp_residency_check {
  int fd;          /* the file, opened read-only; -1 when unknown. The caller owns it. */
  uint64_t offset; /* where the cache starts in it (xp_residency_ask_range), else 0 */
  void* resident; /* XP_RESIDENT: a read-only MAP_SHARED mapping of the whole file (size bytes), checked to
                     be the regular file of that size the caller's stat saw; the caller owns it. Else NULL. */
} xp_residency_check;

/* Asks whether the regular file at path, whose stat said (dev, ino, size), is wholly in the page cache.
 * Reads nothing from storage. On XP_RESIDENT out->resident maps it, so that the caller goes on without
 * mapping it again; on XP_NOT_RESIDENT out->fd stays open for xp_residency_warm (nothing is mapped: a cold file
 * is not read here, so nothing could fault on it); on XP_RESIDENCY_UNKNOWN nothing is held. A failure of the
 * question itself counts as not resident. */
xp_residency xp_residency_ask(const char* path, dev_t dev, ino_t ino, uint64_t size, xp_residency_check* out);

/* As xp_residency_ask for the size bytes at offset of the regular file open as fd (a cache stored inside another
 * file), which the caller keeps: on XP_NOT_RESIDENT out->fd is a duplicate of fd; XP_RESIDENT maps nothing
 * (out->resident NULL). */
xp_residency xp_residency_ask_range(int fd, uint64_t offset, uint64_t size, xp_residency_check* out);

/* Asks the kernel to read the file of a XP_NOT_RESIDENT check into the page cache in the background
 * (posix_fadvise WILLNEED: it queues the reads and returns), size bytes from check->offset, then closes its
 * descriptor. Threads may call it at once: one of them warms and closes, the others return. */
void xp_residency_warm(xp_residency_check* check, uint64_t size);

/* Whether the page of a file mapping that holds `address` is in the page cache (mincore of that page): one
 * system call, no read. Returns 1 if it is, 0 if not or when the kernel does not say. */
int xp_page_resident(const void* address);

#endif
