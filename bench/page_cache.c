/* Files in the page cache, for benchmarks: see page_cache.h. */
#include "page_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int64_t bench_file_size(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

int64_t bench_resident_range(const char* path, uint64_t offset, uint64_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return -1;
  }
  const uint64_t file_size = (uint64_t)st.st_size;
  const uint64_t end = offset < file_size && size < file_size - offset ? offset + size : file_size;
  if (offset >= end) {
    close(fd);
    return 0;
  }
  const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
  int64_t resident = 0;
  /* In windows of 1 GiB so that neither the mapping nor the vector gets large. */
  const uint64_t window = (uint64_t)1 << 30;
  unsigned char* vec = malloc((size_t)(window / page));
  for (uint64_t at = offset / page * page; vec != NULL && at < end; at += window) {
    const size_t len = (size_t)(end - at < window ? end - at : window);
    void* m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)at);
    if (m == MAP_FAILED) {
      resident = -1;
      break;
    }
    const size_t pages = (len + (size_t)page - 1) / (size_t)page;
    if (mincore(m, len, vec) == 0) {
      for (size_t i = 0; i < pages; i++) {
        if (!(vec[i] & 1)) continue;
        const uint64_t lo = at + i * page, hi = lo + page < end ? lo + page : end;
        resident += (int64_t)(hi - (lo < offset ? offset : lo)); /* counted within [offset, end) only */
      }
    } else {
      resident = -1;
    }
    munmap(m, len);
    if (resident < 0) break;
  }
  if (vec == NULL) resident = -1;
  free(vec);
  close(fd);
  return resident;
}

int64_t bench_resident_bytes(const char* path) { return bench_resident_range(path, 0, UINT64_MAX); }

int bench_drop_from_page_cache(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  (void)fdatasync(fd); /* a dirty page (a file just written) is not dropped */
  int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
  return rc == 0 ? 0 : -1;
}

int bench_warm_page_cache(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  enum { CHUNK = 1 << 20 };
  char* buf = malloc(CHUNK);
  int rc = buf ? 0 : -1;
  while (buf) {
    ssize_t n = read(fd, buf, CHUNK);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) rc = -1;
    if (n <= 0) break;
  }
  free(buf);
  close(fd);
  return rc;
}

int bench_wait_resident(const char* path) {
  for (int i = 0; i < 500; i++) {
    const int64_t size = bench_file_size(path);
    if (size >= 0 && bench_resident_bytes(path) == size) return 1;
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
  }
  return 0;
}
