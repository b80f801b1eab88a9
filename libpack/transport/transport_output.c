/* An output file that appears at its path complete or not at all: written as a temporary file in the same
 * directory, synced, renamed into place, and the directory synced so that the rename itself is durable.
 * The temporary file is named and locked as the writer's are (temp_files.h). */
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
#include "transport/transport.h"

xpack_status xt_output_create(xt_output* o, const char* path, xpack_error* err) {
  memset(o, 0, sizeof *o);
  o->fd = -1;
  size_t n = strlen(path) + 32;
  o->path = strdup(path);
  o->tmp_path = malloc(n);
  char* dir_copy = strdup(path);
  char* base_copy = strdup(path);
  if (o->path == NULL || o->tmp_path == NULL || dir_copy == NULL || base_copy == NULL) {
    free(dir_copy);
    free(base_copy);
    xt_output_abort(o);
    return xpack_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", path);
  }
  snprintf(o->tmp_path, n, "%s/.%s.XXXXXX", dirname(dir_copy), basename(base_copy));
  free(dir_copy);
  free(base_copy);
  o->fd = xp_temp_create(o->tmp_path); /* locked while written: a killed run's leftover is removed later */
  if (o->fd < 0) {
    int e = errno;
    free(o->tmp_path);
    o->tmp_path = NULL;
    xt_output_abort(o);
    return xpack_fail(err, XPACK_ERR_IO, "%s: cannot create a temporary file beside it: %s", path, strerror(e));
  }
  fchmod(o->fd, 0644);
  return XPACK_OK;
}

static xpack_status write_at(void* context, const uint8_t* bytes, size_t n, uint64_t offset, xpack_error* err) {
  xt_output* o = context;
  if (xp_write_at(o->fd, bytes, n, offset) == 0) return XPACK_OK;
  return xpack_fail(err, XPACK_ERR_IO, "%s: write of %zu bytes at offset %llu failed: %s", o->path, n,
                    (unsigned long long)offset, strerror(errno));
}

xt_sink xt_output_sink(xt_output* o) { return (xt_sink){write_at, o}; }

static void release(xt_output* o) {
  if (o->fd >= 0) close(o->fd);
  free(o->path);
  free(o->tmp_path);
  memset(o, 0, sizeof *o);
  o->fd = -1;
}

void xt_output_abort(xt_output* o) {
  if (o->tmp_path != NULL) unlink(o->tmp_path);
  release(o);
}

xpack_status xt_output_commit(xt_output* o, uint64_t file_size, xpack_error* err) {
  /* Gaps between regions were never written; ftruncate makes the size exact and the gaps read as zeros. */
  if (ftruncate(o->fd, (off_t)file_size) != 0 || fsync(o->fd) != 0) {
    xpack_status st = xpack_fail(err, XPACK_ERR_IO, "%s: cannot size and sync the temporary file %s: %s", o->path,
                                 o->tmp_path, strerror(errno));
    xt_output_abort(o);
    return st;
  }
  if (close(o->fd) != 0) {
    o->fd = -1;
    xpack_status st = xpack_fail(err, XPACK_ERR_IO, "%s: closing the temporary file failed: %s", o->path,
                                 strerror(errno));
    xt_output_abort(o);
    return st;
  }
  o->fd = -1;
  if (rename(o->tmp_path, o->path) != 0) {
    xpack_status st = xpack_fail(err, XPACK_ERR_IO, "%s: cannot rename the temporary file into place: %s", o->path,
                                 strerror(errno));
    xt_output_abort(o);
    return st;
  }
  char* dir_copy = strdup(o->path);
  if (dir_copy != NULL) {
    int dfd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      fsync(dfd); /* makes the rename durable */
      close(dfd);
    }
    free(dir_copy);
  }
  release(o);
  return XPACK_OK;
}
