/* The one way xpack replaces an output file: see safe_write.h. */
#include "common/safe_write.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/file_io.h"
#include "common/temp_files.h"

static void release(xp_safe_file* f) {
  if (f->fd >= 0) close(f->fd);
  free(f->path);
  free(f->tmp_path);
  memset(f, 0, sizeof *f);
  f->fd = -1;
}

xpack_status xp_safe_create(xp_safe_file* f, const char* path, xpack_error* err) {
  memset(f, 0, sizeof *f);
  f->fd = -1;
  const size_t n = strlen(path) + 32;
  f->path = strdup(path);
  f->tmp_path = malloc(n);
  char* dir_copy = strdup(path);
  char* base_copy = strdup(path);
  if (f->path == NULL || f->tmp_path == NULL || dir_copy == NULL || base_copy == NULL) {
    free(dir_copy);
    free(base_copy);
    release(f);
    return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", path);
  }
  /* Same folder as the target, so that the final rename is atomic. */
  snprintf(f->tmp_path, n, "%s/.%s.XXXXXX", dirname(dir_copy), basename(base_copy));
  free(dir_copy);
  free(base_copy);
  f->fd = xp_temp_create(f->tmp_path);
  if (f->fd < 0) {
    const int e = errno;
    release(f);
    return xp_fail(err, XPACK_ERR_IO, "%s: cannot create a temporary file beside it: %s", path, strerror(e));
  }
  fchmod(f->fd, 0644);
  return XPACK_OK;
}

xpack_status xp_safe_write_at(xp_safe_file* f, const void* bytes, size_t n, uint64_t offset, xpack_error* err) {
  if (xp_write_at(f->fd, bytes, n, offset) == 0) return XPACK_OK;
  return xp_fail(err, XPACK_ERR_IO, "%s: cannot write the temporary file (%zu bytes at offset %llu): %s", f->path,
                    n, (unsigned long long)offset, strerror(errno));
}

void xp_safe_abort(xp_safe_file* f) {
  if (f->tmp_path != NULL) unlink(f->tmp_path);
  release(f);
}

/* Makes a rename inside the folder of path durable. Advice only: a folder that cannot be synced leaves
 * the rename done, as it would be on a file system without that guarantee. */
static void sync_folder(const char* path) {
  char* dir_copy = strdup(path);
  if (dir_copy == NULL) return;
  int dfd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  free(dir_copy);
}

static xpack_status fail_and_abort(xp_safe_file* f, const char* what, xpack_error* err) {
  xpack_status st = xp_fail(err, XPACK_ERR_IO, "%s: %s the temporary file %s: %s", f->path, what, f->tmp_path,
                               strerror(errno));
  xp_safe_abort(f);
  return st;
}

xpack_status xp_safe_commit(xp_safe_file* f, uint64_t file_size, xpack_error* err) {
  if (ftruncate(f->fd, (off_t)file_size) != 0 || fsync(f->fd) != 0) {
    return fail_and_abort(f, "cannot size and sync", err);
  }
  const int closed = close(f->fd);
  f->fd = -1;
  if (closed != 0) return fail_and_abort(f, "cannot close", err);
  if (rename(f->tmp_path, f->path) != 0) {
    xpack_status st = xp_fail(err, XPACK_ERR_IO, "%s: cannot rename the temporary file into place: %s", f->path,
                                 strerror(errno));
    xp_safe_abort(f);
    return st;
  }
  sync_folder(f->path);
  release(f);
  return XPACK_OK;
}
