#include "common/file_map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"

const char* xp_file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

xpack_status xp_open_regular(const char* path, int* fd, uint64_t* size, struct stat* st_out, xpack_error* err) {
  *fd = -1;
  *size = 0;
  if (path[0] == '\0') return xp_fail(err, XPACK_ERR_IO, "an input is an empty path: expected the name of a file");
  int f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (f < 0) {
    /* Out of descriptors or kernel memory: this process's limits, not the file's fault (exit 4, not 3). */
    const int e = errno;
    return xp_fail(err, xp_status_of_errno(e),
                   "%s: cannot open: %s", path, strerror(e));
  }
  struct stat st;
  if (fstat(f, &st) != 0) {
    int e = errno;
    close(f);
    return xp_fail(err, XPACK_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(f);
    return xp_fail(err, XPACK_ERR_IO, "%s: %s, not a regular file: expected a file to read", path,
                   xp_file_kind(st.st_mode));
  }
  int flags = fcntl(f, F_GETFL);
  if (flags >= 0) fcntl(f, F_SETFL, flags & ~O_NONBLOCK); /* reads of a regular file never block anyway */
  *fd = f;
  *size = (uint64_t)st.st_size;
  if (st_out) *st_out = st;
  return XPACK_OK;
}

/* The live mappings, for xpack_mapped_file_at in a signal handler: a fixed table of slots, each claimed
 * with a compare-and-swap of its start (0 free, 1 being filled or emptied) so that map and unmap need no
 * lock a handler could find held. A mapping that finds every slot taken is simply not named. A slot's
 * generation is odd while its fields change: a reader that sees it change across its reads (the slot emptied
 * and filled again between them) passes the slot over rather than pair one mapping's start with another's
 * size or path. Every field is a lock-free atomic, as a handler may read it while a thread writes it. */
enum { MAPPED_SLOTS = 256 };
static struct {
  _Atomic uintptr_t start;
  _Atomic unsigned generation;
  _Atomic uintptr_t size; /* a mapping's size fits its address space */
  _Atomic uintptr_t skew; /* bytes of the mapping before what `path` names (a range mapped from its page's start) */
  _Atomic(char*) path;
} g_mapped[MAPPED_SLOTS];

static void remember_mapping_skewed(const void* data, uint64_t size, uint64_t skew, const char* path) {
  char* copy = strdup(path);
  if (copy == NULL) return;
  for (size_t i = 0; i < MAPPED_SLOTS; i++) {
    uintptr_t expected = 0;
    if (atomic_compare_exchange_strong(&g_mapped[i].start, &expected, (uintptr_t)1)) {
      atomic_fetch_add(&g_mapped[i].generation, 1);
      atomic_thread_fence(memory_order_release); /* the odd generation before the fields (a reader's fence pairs) */
      atomic_store_explicit(&g_mapped[i].size, (uintptr_t)size, memory_order_relaxed);
      atomic_store_explicit(&g_mapped[i].skew, (uintptr_t)skew, memory_order_relaxed);
      atomic_store_explicit(&g_mapped[i].path, copy, memory_order_relaxed);
      atomic_fetch_add(&g_mapped[i].generation, 1);
      atomic_store_explicit(&g_mapped[i].start, (uintptr_t)data, memory_order_release);
      return;
    }
  }
  free(copy);
}

static void remember_mapping(const void* data, uint64_t size, const char* path) {
  remember_mapping_skewed(data, size, 0, path);
}

static void forget_mapping(const void* data) {
  for (size_t i = 0; i < MAPPED_SLOTS; i++) {
    uintptr_t expected = (uintptr_t)data;
    if (atomic_compare_exchange_strong(&g_mapped[i].start, &expected, (uintptr_t)1)) {
      atomic_fetch_add(&g_mapped[i].generation, 1);
      atomic_thread_fence(memory_order_release);
      char* path = atomic_exchange(&g_mapped[i].path, NULL);
      atomic_fetch_add(&g_mapped[i].generation, 1);
      atomic_store_explicit(&g_mapped[i].start, (uintptr_t)0, memory_order_release);
      free(path);
      return;
    }
  }
}

const char* xpack_mapped_file_at(const void* address, unsigned long long* offset) {
  const uintptr_t at = (uintptr_t)address;
  for (size_t i = 0; i < MAPPED_SLOTS; i++) {
    const unsigned before = atomic_load_explicit(&g_mapped[i].generation, memory_order_acquire);
    if (before & 1u) continue;
    const uintptr_t start = atomic_load_explicit(&g_mapped[i].start, memory_order_acquire);
    if (start <= 1 || at < start) continue;
    const uintptr_t size = atomic_load_explicit(&g_mapped[i].size, memory_order_relaxed);
    const uintptr_t skew = atomic_load_explicit(&g_mapped[i].skew, memory_order_relaxed);
    const char* path = atomic_load_explicit(&g_mapped[i].path, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&g_mapped[i].generation, memory_order_relaxed) != before) continue;
    if (at - start < size) {
      const uintptr_t in_mapping = at - start;
      if (offset != NULL) *offset = (unsigned long long)(in_mapping > skew ? in_mapping - skew : 0);
      return path;
    }
  }
  return NULL;
}

xpack_status xp_map_file(const char* path, xp_file_map* out, xpack_error* err) {
  out->data = NULL;
  out->size = 0;
  int fd;
  uint64_t size;
  xpack_status status = xp_open_regular(path, &fd, &size, NULL, err);
  if (status != XPACK_OK) return status;
  if (size > (uint64_t)SIZE_MAX) {
    close(fd);
    return xp_fail(err, XPACK_ERR_IO, "%s: too large to map (%llu bytes)", path, (unsigned long long)size);
  }
  if (size > 0) {
    void* m = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
      int e = errno;
      close(fd);
      /* Out of address space or a mapping limit is the machine's state, not a fault of the file. */
      return xp_fail(err, xp_status_of_errno(e), "%s: mmap of %llu bytes failed: %s", path,
                     (unsigned long long)size, strerror(e));
    }
    out->data = m;
    out->size = size;
    remember_mapping(m, size, path);
  }
  close(fd);
  return XPACK_OK;
}

void xp_adopt_mapping(const char* path, const void* data, uint64_t size, xp_file_map* out) {
  out->data = data;
  out->size = size;
  if (data != NULL) remember_mapping(data, size, path);
}

xpack_status xp_map_file_advised(const char* path, unsigned advice, xp_file_map* out, xpack_error* err) {
  xpack_status st = xp_map_file(path, out, err);
  if (st != XPACK_OK || out->data == NULL) return st;
  if (advice & XP_MAP_SEQUENTIAL) madvise((void*)out->data, (size_t)out->size, MADV_SEQUENTIAL);
  if (advice & XP_MAP_WILLNEED) madvise((void*)out->data, (size_t)out->size, MADV_WILLNEED);
  return XPACK_OK;
}

void xp_advise_range(const void* mapping, uint64_t mapping_size, uint64_t offset, uint64_t size, int advice) {
  if (mapping == NULL || size == 0 || offset >= mapping_size) return;
  const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
  const uint64_t start = offset / page * page;
  uint64_t end = size < mapping_size - offset ? offset + size : mapping_size;
  end = (end + page - 1) / page * page;
  (void)madvise((uint8_t*)mapping + start, (size_t)(end - start), advice);
}

xpack_status xp_check_range(int fd, uint64_t offset, uint64_t size, const char* name, xpack_error* err) {
  struct stat st;
  if (fstat(fd, &st) != 0) return xp_fail(err, XPACK_ERR_IO, "%s: cannot stat the descriptor: %s", name, strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    return xp_fail(err, XPACK_ERR_IO, "%s: the descriptor is %s, not a regular file: expected a file holding the cache",
                   name, xp_file_kind(st.st_mode));
  }
  const uint64_t file_size = (uint64_t)st.st_size;
  if (offset > file_size || size > file_size - offset) {
    return xp_fail(err, XPACK_ERR_TRUNCATED,
                   "%s: its %llu bytes at offset %llu end past the file's %llu bytes: expected a range inside it",
                   name, (unsigned long long)size, (unsigned long long)offset, (unsigned long long)file_size);
  }
  /* Where off_t has 32 bits (32-bit Android, whose fstat still reports 64-bit sizes), an offset past 2 GiB would
   * be cut short on its way to mmap and pread: other bytes than the range's. */
  const uint64_t off_t_max = sizeof(off_t) >= 8 ? (uint64_t)INT64_MAX : (uint64_t)INT32_MAX;
  if (offset + size > off_t_max) {
    return xp_fail(err, XPACK_ERR_IO,
                   "%s: its %llu bytes at offset %llu end past %llu, the last offset this process's file offsets "
                   "(off_t, %zu bits) reach: expected a range below it",
                   name, (unsigned long long)size, (unsigned long long)offset, (unsigned long long)off_t_max,
                   sizeof(off_t) * 8);
  }
  return XPACK_OK;
}

xpack_status xp_map_range(int fd, uint64_t offset, uint64_t size, const char* name, xp_file_map* out, uint64_t* delta,
                          xpack_error* err) {
  out->data = NULL;
  out->size = 0;
  const long page = sysconf(_SC_PAGESIZE);
  *delta = page > 0 ? offset % (uint64_t)page : 0;
  if (size == 0) return XPACK_OK;
  if (size > (uint64_t)SIZE_MAX - *delta) {
    return xp_fail(err, XPACK_ERR_NOMEM, "%s: too large to map (%llu bytes)", name, (unsigned long long)size);
  }
  void* m = mmap(NULL, (size_t)(size + *delta), PROT_READ, MAP_SHARED, fd, (off_t)(offset - *delta));
  if (m == MAP_FAILED) {
    const int e = errno;
    return xp_fail(err, xp_status_of_errno(e), "%s: mmap of %llu bytes at offset %llu failed: %s",
                   name, (unsigned long long)size, (unsigned long long)offset, strerror(e));
  }
  out->data = m;
  out->size = size + *delta;
  remember_mapping_skewed(m, size + *delta, *delta, name); /* offsets in the range, not in its first page */
  return XPACK_OK;
}

void xp_unmap_file(xp_file_map* map) {
  if (map->data != NULL) {
    forget_mapping(map->data);
    munmap((void*)map->data, (size_t)map->size);
  }
  map->data = NULL;
  map->size = 0;
}
