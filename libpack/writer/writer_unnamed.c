/* Writers of files that never get a name: a cache read back by the same process and then gone, whenever
 * and however the process ends (xpack_writer_create_unnamed, xpack_writer_finish_fd). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/error.h"
#include "common/temp_files.h"
#include "writer/writer_internal.h"

xpack_status xpack_writer_create_unnamed(const char* near_path, const xpack_writer_options* options, xpack_writer** out,
                                         xpack_error* err) {
  if (out != NULL) *out = NULL; /* on every failure, a caller error included */
  if (out == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_create_unnamed: NULL argument");
  if (near_path == NULL) {
    /* Messages name the file by this label: the folder alone read as a file "beside" which one was made. */
    const char* tmp = getenv("TMPDIR");
    const int from_env = tmp && tmp[0];
    const char* folder = from_env ? tmp : "/tmp";
    const size_t size = strlen(folder) + 32;
    char* label = malloc(size);
    if (label == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", folder);
    snprintf(label, size, "a scratch file in %s%s", folder, from_env ? " ($TMPDIR)" : "");
    xpack_status st = xp_writer_create(label, folder, options, out, err);
    free(label);
    return st;
  }
  char* folder = xp_folder_of(near_path);
  if (folder == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", near_path);
  struct stat folder_stat;
  if (stat(folder, &folder_stat) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
    /* The caller's path, as xpack_writer_create says of a target's missing folder. */
    xpack_status st = xp_fail(err, XPACK_ERR_ARG, "%s: the folder %s does not exist", near_path, folder);
    free(folder);
    return st;
  }
  xpack_status st = xp_writer_create(near_path, folder, options, out, err);
  free(folder);
  return st;
}

xpack_status xpack_writer_finish_fd(xpack_writer* w, int* fd, xpack_error* err) {
  if (fd == NULL) {
    xpack_writer_abort(w);
    return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_finish_fd: NULL argument");
  }
  *fd = -1;
  if (w == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_finish_fd: NULL writer");
  if (!w->file.unnamed) {
    /* The message before the abort: it frees the path too. */
    const xpack_status st =
        xp_fail(err, XPACK_ERR_ARG, "%s: the writer has a target: use xpack_writer_finish", w->out_path);
    xpack_writer_abort(w);
    return st;
  }
  return xp_writer_finish(w, fd, err);
}
