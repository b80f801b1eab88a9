/* The one way xpack replaces an output file: see safe_write.h. */
#include "common/safe_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/error.h"
#include "common/file_io.h"
#include "common/output_check.h"
#include "common/temp_files.h"

static void release(xp_safe_file* f) {
  if (f->fd >= 0) close(f->fd);
  free(f->path);
  free(f->folder);
  free(f->tmp_path);
  *f = XP_SAFE_FILE_NONE;
}

/* The mode open(2) gives a new file of mode 0666 in this process: 0666 less the umask. Read from
 * /proc/self/status where the kernel says it (Linux 4.7 on), since setting the umask to read it back would
 * change it for a moment for every thread of the process (an app's too); else by setting it back at once. */
static mode_t new_file_mode(void) {
  mode_t mask = 0;
  int known = 0;
  FILE* status = fopen("/proc/self/status", "r");
  if (status != NULL) {
    char line[256];
    unsigned value;
    while (!known && fgets(line, sizeof line, status) != NULL) known = sscanf(line, "Umask: %o", &value) == 1;
    if (known) mask = (mode_t)value;
    fclose(status);
  }
  if (!known) {
    mask = umask(022);
    umask(mask);
  }
  return 0666 & ~mask;
}

/* Opens the temporary file of f in f->folder. */
static xpack_status open_temporary(xp_safe_file* f, xpack_error* err) {
  f->fd = f->unnamed ? xp_temp_open_unnamed(f->folder) : xp_temp_open(f->folder, &f->tmp_path);
  if (f->fd < 0) {
    const int e = errno;
    const xpack_status status = xp_status_of_errno(e);
    /* An unnamed file's label names the file itself (a scratch file in $TMPDIR), not a target beside it. */
    xpack_status st = f->unnamed ? xp_fail(err, status, "%s: cannot create it in the folder %s: %s", f->path, f->folder,
                                           strerror(e))
                                 : xp_fail(err, status, "%s: cannot create a temporary file beside it: %s", f->path,
                                           strerror(e));
    release(f);
    return st;
  }
  /* Made 0600, so that nobody else reads it half-written. A named one then gets the mode any new file of the user's
   * gets (once a fixed 0644: the packed weights of a private model were readable by everyone under umask 077); an
   * unnamed one stays 0600 whatever the umask, since `pack --zstd` reads it back through /proc/self/fd, which checks
   * its mode again (under umask 0477 it could not read its own mappable form). */
  fchmod(f->fd, f->unnamed ? 0600 : new_file_mode());
  return XPACK_OK;
}

xpack_status xp_safe_create(xp_safe_file* f, const char* path, xpack_error* err) {
  *f = XP_SAFE_FILE_NONE;
  xpack_status st = xp_check_output(path, NULL, 0, err);
  if (st != XPACK_OK) return st;
  f->path = strdup(path);
  f->folder = xp_folder_of(path);
  if (f->path == NULL || f->folder == NULL) {
    release(f);
    return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", path);
  }
  xp_temp_sweep(f->folder);
  return open_temporary(f, err);
}

xpack_status xp_safe_create_unnamed(xp_safe_file* f, const char* folder, const char* label, xpack_error* err) {
  *f = XP_SAFE_FILE_NONE;
  f->unnamed = 1;
  f->folder = strdup(folder);
  f->path = strdup(label);
  if (f->path == NULL || f->folder == NULL) {
    release(f);
    return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", label);
  }
  return open_temporary(f, err);
}

xpack_status xp_safe_write_at(xp_safe_file* f, const void* bytes, size_t n, uint64_t offset, xpack_error* err) {
  if (xp_write_at(f->fd, bytes, n, offset) == 0) return XPACK_OK;
  /* Bytes handed straight from an input's mapping: where a read would raise SIGBUS, the kernel's copy fails
   * with EFAULT instead. The input changed, not the output. */
  unsigned long long input_offset = 0;
  const char* input = errno == EFAULT ? xpack_mapped_file_at(bytes, &input_offset) : NULL;
  if (input != NULL) {
    return xp_fail(err, XPACK_ERR_TRUNCATED,
                   "%s: changed while xpack read it: the %zu bytes at offset %llu reach past its end now (the file "
                   "was truncated after it was opened); %s was not written",
                   input, n, input_offset, f->path);
  }
  return xp_fail(err, XPACK_ERR_IO, "%s: cannot write the temporary file (%zu bytes at offset %llu): %s", f->path,
                 n, (unsigned long long)offset, strerror(errno));
}

xpack_status xp_safe_check_room(const xp_safe_file* f, uint64_t bytes, xpack_error* err) {
  struct statvfs fs;
  /* A file system that keeps no count (tmpfs of size 0, FUSE without statfs) reports no blocks at all. */
  if (fstatvfs(f->fd, &fs) != 0 || fs.f_frsize == 0 || fs.f_blocks == 0) return XPACK_OK; /* the writes will tell */
  /* What this user may still take: root may also take the blocks the file system keeps back for it. */
  const uint64_t blocks = geteuid() == 0 ? (uint64_t)fs.f_bfree : (uint64_t)fs.f_bavail;
  const uint64_t room = blocks > UINT64_MAX / fs.f_frsize ? UINT64_MAX : blocks * fs.f_frsize;
  if (bytes <= room) return XPACK_OK;
  return xp_fail(err, XPACK_ERR_IO, "%s: needs %llu bytes, and its file system has %llu free; nothing was written",
                 f->path, (unsigned long long)bytes, (unsigned long long)room);
}

void xp_safe_abort(xp_safe_file* f) {
  if (f->tmp_path != NULL) {
    unlink(f->tmp_path);
    xp_temp_forget_name(f->tmp_path);
  }
  release(f);
}

/* Makes a rename inside the folder durable. Advice only: a folder that cannot be synced leaves the rename
 * done, as it would be on a file system without that guarantee. */
static void sync_folder(const char* folder) {
  int dfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
}

static xpack_status fail_and_abort(xp_safe_file* f, const char* what, xpack_error* err) {
  xpack_status st = xp_fail(err, XPACK_ERR_IO, "%s: %s: %s", f->path, what, strerror(errno));
  xp_safe_abort(f);
  return st;
}

xpack_status xp_safe_keep(xp_safe_file* f, uint64_t file_size, int* fd, xpack_error* err) {
  *fd = -1;
  if (!f->unnamed) {
    xp_safe_abort(f);
    return xp_fail(err, XPACK_ERR_ARG, "xp_safe_keep: the file has a target: commit it");
  }
  if (ftruncate(f->fd, (off_t)file_size) != 0) return fail_and_abort(f, "cannot size the temporary file", err);
  *fd = f->fd;
  f->fd = -1;
  release(f);
  return XPACK_OK;
}

xpack_status xp_safe_commit(xp_safe_file* f, uint64_t file_size, xpack_error* err) {
  if (f->unnamed) {
    xp_safe_abort(f);
    return xp_fail(err, XPACK_ERR_ARG, "xp_safe_commit: an unnamed file has no target");
  }
  if (ftruncate(f->fd, (off_t)file_size) != 0 || fsync(f->fd) != 0) {
    return fail_and_abort(f, "cannot size and sync the temporary file", err);
  }
  /* Checked before the work too (xp_check_output); what appeared at the target since (a FIFO, a folder, a
   * link to a device) is refused again here rather than replaced. */
  xpack_status st = xp_check_output(f->path, NULL, 0, err);
  if (st != XPACK_OK) {
    xp_safe_abort(f);
    return st;
  }
  /* Named only now, and under a short name: a killed writer left nothing until here, and a long target
   * name never makes the temporary name too long. It stays locked until released below. */
  if (f->tmp_path == NULL && xp_temp_link(f->fd, f->folder, &f->tmp_path) != 0) {
    return fail_and_abort(f, "cannot name the temporary file", err);
  }
  if (rename(f->tmp_path, f->path) != 0) return fail_and_abort(f, "cannot rename the temporary file into place", err);
  xp_temp_forget_name(f->tmp_path);
  /* Closed (and unlocked) only once renamed: a named, unlocked temporary file is a leftover to any other
   * writer in this folder. The bytes are synced already, so there is nothing for the close to report. */
  free(f->tmp_path);
  f->tmp_path = NULL;
  sync_folder(f->folder);
  release(f);
  return XPACK_OK;
}
