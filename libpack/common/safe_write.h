/* A file that appears at its path complete or not at all.
 *
 * It is written as a temporary file beside the target (named and locked as temp_files.h says, so a killed
 * writer's leftover is removed by the next one), then sized, synced, renamed over the target, and the
 * folder synced so that the rename itself is durable. On any failure the temporary file is removed and
 * the target is left as it was. The recording writer, compress/inflate and the ExecuTorch export all
 * write their outputs this way. */
#ifndef XPACK_SRC_SAFE_WRITE_H
#define XPACK_SRC_SAFE_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "xpack_status.h"

typedef struct xp_safe_file {
  char* path;     /* the target; owned */
  char* tmp_path; /* the temporary file beside it; owned, NULL once renamed or removed */
  int fd;         /* open on tmp_path (read and write), or -1 */
} xp_safe_file;

/* Creates and locks the temporary file ".<target name>.XXXXXX" beside path, mode 0644. On failure f is
 * released (nothing to abort). Errors: XPACK_ERR_NOMEM, XPACK_ERR_IO ("<path>: cannot create a temporary
 * file beside it: <reason>"). */
xpack_status xp_safe_create(xp_safe_file* f, const char* path, xpack_error* err);

/* Writes n bytes at offset of the temporary file. Errors: XPACK_ERR_IO, naming the target and offset. */
xpack_status xp_safe_write_at(xp_safe_file* f, const void* bytes, size_t n, uint64_t offset, xpack_error* err);

/* Sets the temporary file's size to file_size (bytes never written read as zeros), fsyncs and closes it,
 * renames it over the target and fsyncs the folder. f is released either way; on failure the temporary
 * file is removed and the target is untouched. Errors: XPACK_ERR_IO. */
xpack_status xp_safe_commit(xp_safe_file* f, uint64_t file_size, xpack_error* err);

/* Removes the temporary file and releases f. Safe on a file released already, and on a zeroed one whose
 * fd was set to -1. */
void xp_safe_abort(xp_safe_file* f);

#endif
