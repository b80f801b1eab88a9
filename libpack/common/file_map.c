#include "common/file_map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"

xpack_status xp_map_file(const char* path, xp_file_map* out, xpack_error* err) {
  out->data = NULL;
  out->size = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return xpack_fail(err, XPACK_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return xpack_fail(err, XPACK_ERR_IO, "%s: not a regular file", path);
  }
  if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX) {
    close(fd);
    return xpack_fail(err, XPACK_ERR_IO, "%s: too large to map (%lld bytes)", path, (long long)st.st_size);
  }
  if (st.st_size > 0) {
    void* m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
      int e = errno;
      close(fd);
      return xpack_fail(err, XPACK_ERR_IO, "%s: mmap failed: %s", path, strerror(e));
    }
    out->data = m;
    out->size = (uint64_t)st.st_size;
  }
  close(fd);
  return XPACK_OK;
}

xpack_status xp_map_file_advised(const char* path, unsigned advice, xp_file_map* out, xpack_error* err) {
  xpack_status st = xp_map_file(path, out, err);
  if (st != XPACK_OK || out->data == NULL) return st;
  if (advice & XP_MAP_SEQUENTIAL) madvise((void*)out->data, (size_t)out->size, MADV_SEQUENTIAL);
  if (advice & XP_MAP_WILLNEED) madvise((void*)out->data, (size_t)out->size, MADV_WILLNEED);
  return XPACK_OK;
}

void xp_unmap_file(xp_file_map* map) {
  if (map->data != NULL) munmap((void*)map->data, (size_t)map->size);
  map->data = NULL;
  map->size = 0;
}
