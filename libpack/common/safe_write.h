/* A file that appears at its path complete or not at all.
 *
 * It is written as a temporary file in the target's folder (temp_files.h: nameless where the file system
 * allows, so a killed writer leaves nothing), then sized, synced, given a short temporary name, renamed
 * over the target, and the folder synced so that the rename itself is durable. On any failure the
 * temporary file goes and the target is left as it was. What is at the target must be a regular file, a
 * symbolic link (replaced itself) or nothing (output_check.h). Errors name the target, never the temporary
 * file. The recording writer, compress/inflate and the ExecuTorch export all write their outputs this way;
 * the writer's unnamed files (xp_safe_create_unnamed) are never renamed anywhere. */
#ifndef XPACK_SRC_SAFE_WRITE_H
#define XPACK_SRC_SAFE_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "xpack_status.h"

typedef struct xp_safe_file {
  char* path;     /* the target, or for an unnamed file what it is for (messages name it); owned */
  char* folder;   /* where the temporary file lives; owned */
  char* tmp_path; /* the temporary file's name while it has one; owned, or NULL */
  int fd;         /* open on the temporary file (read and write), or -1 */
  int unnamed;    /* made by xp_safe_create_unnamed: never committed to a path */
} xp_safe_file;

/* A released file, for initialising one that may be aborted before it is created. */
#define XP_SAFE_FILE_NONE ((xp_safe_file){NULL, NULL, NULL, -1, 0})

/* Refuses what is at path as xp_check_output does (no inputs), then creates the locked temporary file in
 * path's folder, mode 0666 less the umask (as open(2) makes a new file). On failure f is released (nothing to abort). Errors: XPACK_ERR_ARG (path is a
 * device, FIFO, socket or folder, or a link to one), XPACK_ERR_NOMEM, XPACK_ERR_IO ("<path>: cannot create
 * a temporary file beside it: <reason>"). */
xpack_status xp_safe_create(xp_safe_file* f, const char* path, xpack_error* err);

/* A temporary file in `folder` that never gets a name: for a result read back by this process only
 * (xp_safe_keep), gone when its last descriptor or mapping is. Messages name `label` (what the file is
 * for). Errors: XPACK_ERR_NOMEM, XPACK_ERR_IO. */
xpack_status xp_safe_create_unnamed(xp_safe_file* f, const char* folder, const char* label, xpack_error* err);

/* Writes n bytes at offset of the temporary file. Errors: XPACK_ERR_IO, naming the target and offset;
 * XPACK_ERR_TRUNCATED when bytes lie in an input's mapping that the input's truncation took away (naming the
 * input and the offset in it). */
xpack_status xp_safe_write_at(xp_safe_file* f, const void* bytes, size_t n, uint64_t offset, xpack_error* err);

/* Sets the temporary file's size to file_size (bytes never written read as zeros), fsyncs and closes it,
 * renames it over the target and fsyncs the folder. f is released either way; on failure the temporary
 * file is removed and the target is untouched. Errors: XPACK_ERR_IO; XPACK_ERR_ARG for an unnamed file. */
xpack_status xp_safe_commit(xp_safe_file* f, uint64_t file_size, xpack_error* err);

/* Sets the size of an unnamed file to file_size and hands its descriptor to the caller (*fd, who closes
 * it); f is released either way. Errors: XPACK_ERR_IO; XPACK_ERR_ARG for a file made by xp_safe_create. */
xpack_status xp_safe_keep(xp_safe_file* f, uint64_t file_size, int* fd, xpack_error* err);

/* Whether the temporary file's file system has room for `bytes` more (free blocks this user may take), before a
 * writer that knows its output's size writes any of it: XPACK_ERR_IO naming the target, the bytes needed and the
 * room. XPACK_OK when the file system does not say. */
xpack_status xp_safe_check_room(const xp_safe_file* f, uint64_t bytes, xpack_error* err);

/* Removes the temporary file and releases f. Safe on a file released already, and on XP_SAFE_FILE_NONE. */
void xp_safe_abort(xp_safe_file* f);

#endif
