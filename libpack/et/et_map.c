#include "et_map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

xpack_status xp_et_map_file(const char* path, xp_et_map* out, xpack_error* err) {
  memset(out, 0, sizeof *out);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return xpack_fail(err, XPACK_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return xpack_fail(err, XPACK_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return xpack_fail(err, XPACK_ERR_IO, "%s: not a regular file", path);
  }
  if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX) {
    close(fd);
    return xpack_fail(err, XPACK_ERR_IO, "%s: too large to map (%lld bytes)", path, (long long)st.st_size);
  }
  size_t size = (size_t)st.st_size;
  if (size == 0) {
    close(fd);
    return XPACK_OK;
  }
  void* p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int e = errno;
  close(fd);
  if (p == MAP_FAILED) return xpack_fail(err, XPACK_ERR_IO, "%s: cannot mmap %zu bytes: %s", path, size, strerror(e));
  out->data = p;
  out->size = size;
  out->mapping = p;
  out->mapping_size = size;
  return XPACK_OK;
}

void xp_et_map_release(xp_et_map* map) {
  if (map->mapping) munmap(map->mapping, map->mapping_size);
  memset(map, 0, sizeof *map);
}

int xp_et_key_compare(const char* a, size_t a_len, const char* b, size_t b_len) {
  size_t n = a_len < b_len ? a_len : b_len;
  int c = n ? memcmp(a, b, n) : 0;
  if (c != 0) return c;
  return (a_len > b_len) - (a_len < b_len);
}

char* xp_et_strdup(const char* s) {
  size_t n = strlen(s) + 1;
  char* d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}
