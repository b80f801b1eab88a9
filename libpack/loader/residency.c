/* Whether a file is wholly in the page cache: see residency.h. */
#define _GNU_SOURCE
#include "loader/residency.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* cachestat(2) has the same number on every Linux architecture; older C libraries do not define it. Android's
 * seccomp filter kills an app on a system call it does not list, so there the check keeps to mmap and mincore. */
#if defined(__linux__) && !defined(__ANDROID__)
#define XP_HAVE_CACHESTAT 1
#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif
struct xp_cachestat_range {
  uint64_t off;
  uint64_t len;
};
struct xp_cachestat {
  uint64_t nr_cache;
  uint64_t nr_dirty;
  uint64_t nr_writeback;
  uint64_t nr_evicted;
  uint64_t nr_recently_evicted;
};
#endif

static uint64_t pages_of(uint64_t size, uint64_t page) { return (size + page - 1) / page; }

/* Whether bytes [offset, offset + size) of fd are in the page cache: 1 resident, 0 not, -1 the kernel cannot
 * say (no cachestat: too old, compiled out, or refused by a filter). */
static int cachestat_resident(int fd, uint64_t offset, uint64_t size, uint64_t page) {
#ifdef XP_HAVE_CACHESTAT
  struct xp_cachestat_range range = {offset, size};
  struct xp_cachestat stat = {0};
  if (syscall(SYS_cachestat, fd, &range, &stat, 0) != 0) return -1;
  return stat.nr_cache >= pages_of(offset % page + size, page);
#else
  (void)fd, (void)offset, (void)size, (void)page;
  return -1;
#endif
}

/* mincore over the mapping, in windows so that the vector stays on the stack. */
static int mincore_resident(void* map, uint64_t size, uint64_t page) {
  unsigned char vector[256];
  const uint64_t pages = pages_of(size, page);
  for (uint64_t first = 0; first < pages; first += sizeof vector) {
    const uint64_t count = pages - first < sizeof vector ? pages - first : sizeof vector;
    const uint64_t bytes = first + count == pages ? size - first * page : count * page;
    if (mincore((unsigned char*)map + first * page, (size_t)bytes, vector) != 0) return 0;
    for (uint64_t i = 0; i < count; i++) {
      if ((vector[i] & 1) == 0) return 0;
    }
  }
  return 1;
}

/* A mapping of the whole file, made only once fstat confirms that fd is still the regular file of `size`
 * bytes the caller's stat saw: a shorter one put there since would fault (SIGBUS) past its end. */
static void* map_if_same(int fd, dev_t dev, ino_t ino, uint64_t size) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != dev || st.st_ino != ino ||
      (uint64_t)st.st_size != size || size == 0 || size > (uint64_t)SIZE_MAX) { /* SIZE_MAX: 32-bit targets */
    return NULL;
  }
  void* m = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
  return m == MAP_FAILED ? NULL : m;
}

xp_residency xp_residency_ask(const char* path, dev_t dev, ino_t ino, uint64_t size, xp_residency_check* out) {
  *out = (xp_residency_check){.fd = -1, .resident = NULL};
  const long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) return XP_RESIDENCY_UNKNOWN;
  /* O_NONBLOCK: a FIFO put there since the caller's stat must not hang the open. */
  const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return XP_RESIDENCY_UNKNOWN;
  int resident = cachestat_resident(fd, 0, size, (uint64_t)page);
  void* map = NULL;
  if (resident != 0) { /* resident, or unknown: the mapping serves the file, or mincore asks on it */
    map = map_if_same(fd, dev, ino, size);
    if (map == NULL) {
      close(fd);
      return XP_RESIDENCY_UNKNOWN;
    }
    if (resident < 0) resident = mincore_resident(map, size, (uint64_t)page);
  }
  if (resident) {
    close(fd);
    out->resident = map;
    return XP_RESIDENT;
  }
  if (map != NULL) munmap(map, (size_t)size);
  out->fd = fd;
  return XP_NOT_RESIDENT;
}

xp_residency xp_residency_ask_range(int fd, uint64_t offset, uint64_t size, xp_residency_check* out) {
  *out = (xp_residency_check){.fd = -1, .resident = NULL};
  const long page = sysconf(_SC_PAGESIZE);
  if (page <= 0 || size == 0) return XP_RESIDENCY_UNKNOWN;
  int resident = cachestat_resident(fd, offset, size, (uint64_t)page);
  if (resident < 0) { /* the pages that hold the range, mapped to ask mincore; the caller checked the file's size */
    const uint64_t start = offset / (uint64_t)page * (uint64_t)page, length = offset - start + size;
    if (length > (uint64_t)SIZE_MAX) return XP_RESIDENCY_UNKNOWN; /* a caller's cold limit past 4 GiB, 32-bit */
    void* map = mmap(NULL, (size_t)length, PROT_READ, MAP_SHARED, fd, (off_t)start);
    if (map == MAP_FAILED) return XP_RESIDENCY_UNKNOWN;
    resident = mincore_resident(map, length, (uint64_t)page);
    munmap(map, (size_t)length);
  }
  if (resident) return XP_RESIDENT;
  out->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (out->fd < 0) return XP_RESIDENCY_UNKNOWN;
  out->offset = offset;
  return XP_NOT_RESIDENT;
}

void xp_residency_warm(xp_residency_check* check, uint64_t size) {
  /* Taken once, whichever thread warms first: two threads that both saw the descriptor would close it twice, and
   * the second close could close a file another thread had just been given the same number for. */
  const int fd = __atomic_exchange_n(&check->fd, -1, __ATOMIC_ACQ_REL);
  if (fd < 0) return;
  (void)posix_fadvise(fd, (off_t)check->offset, (off_t)size, POSIX_FADV_WILLNEED);
  close(fd);
}

int xp_page_resident(const void* address) {
  const long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) return 0;
  void* start = (void*)((uintptr_t)address & ~(uintptr_t)(page - 1));
  return mincore_resident(start, (uint64_t)page, (uint64_t)page);
}
