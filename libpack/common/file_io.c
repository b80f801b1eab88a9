/* Positioned writes and range copies: see file_io.h. */
#ifdef __linux__
#define _GNU_SOURCE /* copy_file_range */
#endif
#include "common/file_io.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#define XP_COPY_CHUNK (1u << 20)

int xp_write_at(int fd, const void* bytes, size_t n, uint64_t offset) {
  const uint8_t* p = bytes;
  while (n > 0) {
    ssize_t k = pwrite(fd, p, n, (off_t)offset);
    if (k < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += k;
    n -= (size_t)k;
    offset += (uint64_t)k;
  }
  return 0;
}

static int copy_through_buffer(int from, uint64_t from_offset, int to, uint64_t to_offset, uint64_t size) {
  uint8_t* buf = malloc(size < XP_COPY_CHUNK ? (size_t)size : XP_COPY_CHUNK);
  if (buf == NULL) return -1;
  int rc = 0;
  while (size > 0) {
    size_t n = size < XP_COPY_CHUNK ? (size_t)size : XP_COPY_CHUNK;
    ssize_t k = pread(from, buf, n, (off_t)from_offset);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      if (k == 0) errno = EIO;
      rc = -1;
      break;
    }
    if (xp_write_at(to, buf, (size_t)k, to_offset) != 0) {
      rc = -1;
      break;
    }
    from_offset += (uint64_t)k;
    to_offset += (uint64_t)k;
    size -= (uint64_t)k;
  }
  int e = errno;
  free(buf);
  errno = e;
  return rc;
}

int xp_copy_range(int from, uint64_t from_offset, int to, uint64_t to_offset, uint64_t size) {
#if defined(__linux__)
  while (size > 0) {
    loff_t in = (loff_t)from_offset, out = (loff_t)to_offset; /* 64-bit offsets also where off_t has 32 bits */
    size_t n = size > ((size_t)1 << 30) ? ((size_t)1 << 30) : (size_t)size;
    ssize_t k = copy_file_range(from, &in, to, &out, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == ENOSYS || errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP)) break;
    if (k < 0) return -1;
    if (k == 0) {
      errno = EIO;
      return -1;
    }
    from_offset += (uint64_t)k;
    to_offset += (uint64_t)k;
    size -= (uint64_t)k;
  }
  if (size == 0) return 0;
#endif
  return copy_through_buffer(from, from_offset, to, to_offset, size);
}
