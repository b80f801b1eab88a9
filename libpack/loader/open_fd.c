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
#include "loader/cache_state.h"
#include "loader/open_steps.h"
#include "loader/xnn_compat.h"
#include "xpack_loader.h"
#include "xpc_format.h"

/* Maps the pages that hold the range; base is then offset's byte in them. Leaves c unmapped (and returns
 * XPACK_OK) when the bytes would not lie on XNNPACK's alignment, for the caller to read them instead. */
static xpack_status map_range(xpack_cache* c, int fd, uint64_t offset, unsigned flags, const char* name,
                              xpack_error* err) {
  const long page = sysconf(_SC_PAGESIZE);
  if (page <= 0 || offset % (uint64_t)page % xp_xnn_alignment() != 0) return XPACK_OK;
  xp_file_map map;
  uint64_t delta;
  xpack_status st = xp_map_range(fd, offset, c->size, name, &map, &delta, err); /* a SIGBUS names the cache */
  if (st != XPACK_OK) return st;
  if (flags & XPACK_OPEN_SEQUENTIAL) madvise((void*)map.data, (size_t)map.size, MADV_SEQUENTIAL);
  if (flags & XPACK_OPEN_WILLNEED) madvise((void*)map.data, (size_t)map.size, MADV_WILLNEED);
  c->base = (uint8_t*)map.data + delta;
  c->map_delta = delta;
  c->mapped = 1;
  return XPACK_OK;
}

xpack_status xpack_cache_open_fd(int fd, uint64_t offset, uint64_t size, const char* name, unsigned flags,
                                 const xpack_open_limits* limits, xpack_cache** out, xpack_error* err) {
  if (out != NULL) *out = NULL; /* on every failure, a caller error included */
  if (out == NULL || name == NULL || fd < 0 || !xp_open_flags_known(flags)) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_cache_open_fd: %s",
                   out == NULL    ? "NULL output"
                   : name == NULL ? "NULL name"
                   : fd < 0       ? "negative descriptor"
                                  : "unknown flags");
  }
  const xpack_status range = xp_check_range(fd, offset, size, name, err);
  if (range != XPACK_OK) return range;
  if (size < XPC_HEADER_SIZE + XPC_FOOTER_SIZE) {
    uint8_t first[XPC_HEADER_MAGIC_SIZE];
    const int got = size >= sizeof first && pread(fd, first, sizeof first, (off_t)offset) == (ssize_t)sizeof first;
    return xp_refuse_too_short(name, size, got ? first : NULL, err);
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
