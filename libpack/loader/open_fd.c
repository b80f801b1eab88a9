/* xpack_cache_open_fd: a cache stored inside another file (an app's uncompressed asset in its APK), open as a
 * descriptor, mapped in place where XNNPACK's alignment allows and read into memory where it does not. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/file_map.h"
#include "common/target.h"
#include "loader/cache_state.h"
#include "loader/open_steps.h"
#include "xpack_loader.h"
#include "xpc_format.h"

/* Maps the pages that hold the range; base is then offset's byte in them. Leaves c unmapped (and returns
 * XPACK_OK) when the bytes would not lie on XNNPACK's alignment, for the caller to read them instead. */
static xpack_status map_range(xpack_cache* c, int fd, uint64_t offset, unsigned flags, const char* name,
                              xpack_error* err) {
  const long page = sysconf(_SC_PAGESIZE);
  const uint64_t delta = page > 0 ? offset % (uint64_t)page : 0;
  if (page <= 0 || delta % xp_target_xnn_alignment() != 0 || c->size + delta > SIZE_MAX) return XPACK_OK;
  void* m = mmap(NULL, (size_t)(c->size + delta), PROT_READ, MAP_SHARED, fd, (off_t)(offset - delta));
  if (m == MAP_FAILED) {
    const int e = errno;
    return xp_fail(err, e == ENOMEM ? XPACK_ERR_NOMEM : XPACK_ERR_IO, "%s: mmap of %llu bytes at offset %llu failed: %s",
                   name, (unsigned long long)c->size, (unsigned long long)offset, strerror(e));
  }
  xp_file_map map;
  xp_adopt_mapping(name, m, c->size + delta, &map); /* a SIGBUS in it is reported naming the cache */
  if (flags & XPACK_OPEN_SEQUENTIAL) madvise(m, (size_t)(c->size + delta), MADV_SEQUENTIAL);
  if (flags & XPACK_OPEN_WILLNEED) madvise(m, (size_t)(c->size + delta), MADV_WILLNEED);
  c->base = (uint8_t*)m + delta;
  c->map_delta = delta;
  c->mapped = 1;
  return XPACK_OK;
}

xpack_status xpack_cache_open_fd(int fd, uint64_t offset, uint64_t size, const char* name, unsigned flags,
                                 const xpack_open_limits* limits, xpack_cache** out, xpack_error* err) {
  if (out == NULL || name == NULL || fd < 0 || !xp_open_flags_known(flags)) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_cache_open_fd: %s",
                   out == NULL    ? "NULL output"
                   : name == NULL ? "NULL name"
                   : fd < 0       ? "negative descriptor"
                                  : "unknown flags");
  }
  *out = NULL;
  struct stat st;
  if (fstat(fd, &st) != 0) return xp_fail(err, XPACK_ERR_IO, "%s: cannot stat the descriptor: %s", name, strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    return xp_fail(err, XPACK_ERR_IO, "%s: the descriptor is %s, not a regular file: expected a file holding the cache",
                   name, xp_file_kind(st.st_mode));
  }
  const uint64_t file_size = (uint64_t)st.st_size;
  if (offset > file_size || size > file_size - offset) {
    return xp_fail(err, XPACK_ERR_TRUNCATED,
                   "%s: the cache's %llu bytes at offset %llu end past the file's %llu bytes: expected a range inside it",
                   name, (unsigned long long)size, (unsigned long long)offset, (unsigned long long)file_size);
  }
  if (size < XPC_HEADER_SIZE + XPC_FOOTER_SIZE) {
    return xp_fail(err, size == 0 ? XPACK_ERR_NOT_XPACK : XPACK_ERR_TRUNCATED,
                   "%s: %llu bytes is too short for an xpack cache (at least %d)", name, (unsigned long long)size,
                   XPC_HEADER_SIZE + XPC_FOOTER_SIZE);
  }
  const xp_open_limits_resolved limit = xp_open_limits_resolve(limits);
  xpack_cache* c = xp_cache_new(flags);
  if (c == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", name);
  c->size = size;
  if ((flags & XPACK_OPEN_SKIP_SMALL) && size < limit.small) {
    xp_cache_skip_small(c, size, limit.small);
    *out = c;
    return XPACK_OK;
  }
  if ((flags & XPACK_OPEN_SKIP_COLD) && size < limit.cold) {
    xp_residency_check check;
    if (xp_residency_ask_range(fd, offset, size, &check) == XP_NOT_RESIDENT) {
      xp_cache_skip_cold(c, size, limit.cold, &check);
      *out = c;
      return XPACK_OK;
    }
  }
  xpack_status st_load = (flags & XPACK_OPEN_READ) ? XPACK_OK : map_range(c, fd, offset, flags, name, err);
  if (st_load == XPACK_OK && !c->mapped) st_load = xp_cache_read(c, fd, offset, name, err);
  if (st_load != XPACK_OK) {
    xp_cache_unload(c);
    free(c);
    return st_load;
  }
  return xp_cache_finish_open(c, name, flags, out, err);
}
