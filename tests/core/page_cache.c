#include "page_cache.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

long page_cache_resident(const char* path, long* pages) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  void* m = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size > 0) m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return -1;
  const long page = sysconf(_SC_PAGESIZE);
  *pages = (long)((st.st_size + page - 1) / page);
  unsigned char* vec = malloc((size_t)*pages);
  long n = -1;
  if (vec != NULL && mincore(m, (size_t)st.st_size, vec) == 0) {
    n = 0;
    for (long i = 0; i < *pages; i++) n += vec[i] & 1;
  }
  free(vec);
  munmap(m, (size_t)st.st_size);
  return n;
}

int page_cache_drop(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  fdatasync(fd);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
  long pages;
  return page_cache_resident(path, &pages) == 0;
}

int page_cache_wait_resident(const char* path) {
  for (int i = 0; i < 500; i++) {
    long pages, n = page_cache_resident(path, &pages);
    if (n >= 0 && n == pages) return 1;
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
  }
  return 0;
}
