/* Outputs that must not be written over, and output paths that cannot be written: see output_check.h. */
#include "common/output_check.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/fs.h>   /* FS_IOC_GETFLAGS: chattr's attributes */
#include <linux/stat.h> /* struct statx, STATX_ATTR_*: the same, without opening the file */
#include <sys/syscall.h>
#endif

#include "common/error.h"
#include "common/file_map.h"
#include "common/temp_files.h"

/* A path as a message shows it: whole up to 160 bytes, else "..." and its last 100 bytes, so that a message
 * about a path near PATH_MAX still has room (XPACK_ERROR_MESSAGE_SIZE) to say what is wrong with it. */
typedef struct shown_path {
  char text[168];
} shown_path;
static shown_path shown(const char* path) {
  shown_path p;
  const size_t len = strlen(path);
  if (len <= 160) snprintf(p.text, sizeof p.text, "%s", path);
  else snprintf(p.text, sizeof p.text, "...%s", path + len - 100);
  return p;
}

/* The folder that will hold out_path's file, as a path ("." for a bare name), written into `folder`. */
static xpack_status output_folder(const char* out_path, char* folder, size_t folder_size, const char** name,
                                  xpack_error* err) {
  const char* slash = strrchr(out_path, '/');
  if (slash == NULL) {
    strcpy(folder, ".");
    *name = out_path;
    return XPACK_OK;
  }
  size_t len = (size_t)(slash - out_path);
  if (len == 0) len = 1; /* "/name": the root */
  if (len >= folder_size) {
    return xp_fail(err, XPACK_ERR_ARG, "%s: the output's folder is a path of %zu bytes, longer than %zu",
                   shown(out_path).text, len, folder_size - 1);
  }
  memcpy(folder, out_path, len);
  folder[len] = '\0';
  *name = slash + 1;
  return XPACK_OK;
}

/* The attribute of `path` (chattr +a or +i) under which the rename that puts a finished file into place fails with
 * EPERM, root's too: "append-only", "immutable", or NULL (none, or the file system keeps no attributes). An
 * append-only folder also keeps the temporary file's name, which cannot be removed once the rename failed.
 * statx reads them without opening the file, so a folder the user may write into but not read (a drop folder,
 * mode 0300) is seen too; it is called through syscall() because glibc declares it only under _GNU_SOURCE and
 * bionic only from API level 30. Where the kernel lacks it, or the file system does not say, the file is opened
 * and asked with FS_IOC_GETFLAGS, which needs read permission. */
static const char* attribute_against_rename(const char* path, int folder) {
#if defined(__linux__)
#if defined(SYS_statx) && defined(STATX_ATTR_APPEND) && defined(STATX_ATTR_IMMUTABLE)
  struct statx sx;
  const uint64_t both = STATX_ATTR_APPEND | STATX_ATTR_IMMUTABLE;
  if (syscall(SYS_statx, AT_FDCWD, path, folder ? 0 : AT_SYMLINK_NOFOLLOW, 0, &sx) == 0 &&
      (sx.stx_attributes_mask & both) == both) {
    if (sx.stx_attributes & STATX_ATTR_IMMUTABLE) return "immutable";
    if (sx.stx_attributes & STATX_ATTR_APPEND) return "append-only";
    return NULL;
  }
#endif
#if defined(FS_IOC_GETFLAGS)
  const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (folder ? O_DIRECTORY : O_NOFOLLOW));
  if (fd < 0) return NULL;
  int flags = 0;
  const int got = ioctl(fd, FS_IOC_GETFLAGS, &flags);
  close(fd);
  if (got != 0) return NULL;
  if (flags & FS_IMMUTABLE_FL) return "immutable";
  if (flags & FS_APPEND_FL) return "append-only";
#endif
#endif
  (void)path, (void)folder;
  return NULL;
}

/* Checks that the output can be made where it is named, so that a typo fails before the work and not at the
 * rename, once it is all done. */
static xpack_status check_output_place(const char* out_path, xpack_error* err) {
  size_t path_len = strlen(out_path);
  if (out_path[path_len - 1] == '/') {
    return xp_fail(err, XPACK_ERR_ARG, "%s: the output ends in '/', which names a folder: expected a file name",
                   out_path);
  }
  char folder[PATH_MAX];
  const char* name = NULL;
  xpack_status st = output_folder(out_path, folder, sizeof folder, &name, err);
  if (st != XPACK_OK) return st;
  struct stat folder_stat;
  if (stat(folder, &folder_stat) != 0) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR) {
      return xp_fail(err, XPACK_ERR_ARG, "%s: the output's folder %s does not exist", out_path, folder);
    }
    return xp_fail(err, XPACK_ERR_IO, "%s: cannot look at the output's folder %s: %s", out_path, folder,
                   strerror(e));
  }
  if (!S_ISDIR(folder_stat.st_mode)) {
    return xp_fail(err, XPACK_ERR_ARG, "%s: %s is %s, not a folder", out_path, folder,
                   xp_file_kind(folder_stat.st_mode));
  }
  if (xp_is_temp_name(name)) {
    return xp_fail(err, XPACK_ERR_ARG, "%s: the output's name has the form of xpack's temporary files "
                   "(.xpack-XXXXXX.tmp), which a later write in its folder removes as a killed writer's leftover: "
                   "choose another name", out_path);
  }
  if (strlen(folder) + XP_TEMP_NAME_IN_FOLDER >= PATH_MAX) {
    return xp_fail(err, XPACK_ERR_ARG, "%s: the output's folder is a path of %zu bytes: with a temporary file's "
                   "name beside it (%d bytes more) it would pass PATH_MAX (%d)", shown(out_path).text, strlen(folder),
                   XP_TEMP_NAME_IN_FOLDER, PATH_MAX);
  }
  long name_max = pathconf(folder, _PC_NAME_MAX);
  size_t name_len = strlen(name);
  if (name_max > 0 && name_len > (size_t)name_max) {
    return xp_fail(err, XPACK_ERR_ARG, "%s: the output's name is %zu bytes, more than the %ld its folder's file system allows",
                   out_path, name_len, name_max);
  }
  /* Before the permission check, which root passes in an append-only folder and fails in an immutable one with
   * only "Operation not permitted". */
  const char* attribute = attribute_against_rename(folder, 1);
  if (attribute != NULL) {
    return xp_fail(err, XPACK_ERR_IO, "%s: the output's folder %s is %s (chattr), where no file can be renamed into "
                   "place, as xpack puts a complete output: expected a folder without that attribute", out_path, folder,
                   attribute);
  }
  /* The effective ids decide, as they will at the write; root passes unless the file system is read-only. */
  if (faccessat(AT_FDCWD, folder, W_OK | X_OK, AT_EACCESS) != 0) {
    return xp_fail(err, XPACK_ERR_IO, "%s: cannot write into the output's folder %s: %s", out_path, folder,
                   strerror(errno));
  }
  /* In a folder with the sticky bit (/tmp) only the owner of a name, or of the folder, may replace it: the rename
   * at the end would fail after all the work. Root passes, as it may replace any name there. */
  struct stat dir, target;
  const int has_target = lstat(out_path, &target) == 0;
  const uid_t user = geteuid();
  if (user != 0 && has_target && stat(folder, &dir) == 0 && (dir.st_mode & S_ISVTX) && target.st_uid != user &&
      dir.st_uid != user) {
    return xp_fail(err, XPACK_ERR_IO, "%s: belongs to another user (uid %u) in a folder with the sticky bit (%s), "
                   "where only its owner or the folder's may replace it", out_path, (unsigned)target.st_uid, folder);
  }
  if (has_target && S_ISREG(target.st_mode) &&
      (attribute = attribute_against_rename(out_path, 0)) != NULL) { /* a link is replaced, not its target */
    return xp_fail(err, XPACK_ERR_IO, "%s: is %s (chattr), so it cannot be replaced: expected a file without that "
                   "attribute, or another name", out_path, attribute);
  }
  return XPACK_OK;
}

/* Whether a folder is /proc or lies in it. */
static int in_proc(const char* folder) {
  char real[PATH_MAX];
  if (realpath(folder, real) == NULL) return 0;
  return strcmp(real, "/proc") == 0 || strncmp(real, "/proc/", 6) == 0;
}

/* Whether out_path is, or leads through, a symbolic link in /proc (/proc/self/fd/1, /dev/stdout, /dev/fd/1, a
 * link to one of them): a process's descriptor, not a name. Renaming a finished file over it would replace
 * the link (as root, /dev/stdout itself) and write nothing where the caller meant. Returns the first such
 * link, in `hop`, or 0. */
static int leads_into_proc(const char* out_path, char hop[PATH_MAX]) {
  char folder[PATH_MAX];
  snprintf(hop, PATH_MAX, "%s", out_path);
  for (int hops = 0; hops < 40; hops++) { /* the kernel's own limit on links in a path */
    char text[PATH_MAX];
    const ssize_t n = readlink(hop, text, sizeof text - 1);
    if (n < 0) return 0; /* not a link (or gone): the last hop */
    text[n] = '\0';
    const char* name = NULL;
    xpack_error ignored;
    if (output_folder(hop, folder, sizeof folder, &name, &ignored) != XPACK_OK) return 0;
    if (in_proc(folder)) return 1;
    if (text[0] == '/' || strcmp(folder, ".") == 0) snprintf(hop, PATH_MAX, "%s", text);
    else if ((size_t)snprintf(hop, PATH_MAX, "%s/%s", folder, text) >= PATH_MAX) return 0;
  }
  return 0;
}

xpack_status xp_check_output(const char* out_path, const char* const* inputs, size_t input_count, xpack_error* err) {
  /* An empty name would pass for a new file here and fail only at the rename, once all the work is done. */
  if (out_path[0] == '\0') {
    return xp_fail(err, XPACK_ERR_ARG, "the output is an empty path: expected the name of a file to write");
  }
  if (strcmp(out_path, "-") == 0) {
    return xp_fail(err, XPACK_ERR_ARG,
                   "-: xpack writes its outputs to files, not to stdout: name a file (./- for a file called '-')");
  }
  char hop[PATH_MAX];
  if (leads_into_proc(out_path, hop)) {
    return xp_fail(err, XPACK_ERR_ARG,
                   "%s: the output leads into /proc (%s), to a process's descriptor, not a file: xpack writes a "
                   "complete file and renames it into place, so name a file", out_path, hop);
  }
  /* The inputs are read, not written: a writer's clean-up of killed writers' files never takes one. */
  for (size_t i = 0; i < input_count; i++) {
    struct stat in;
    if (stat(inputs[i], &in) == 0) xp_temp_spare(in.st_dev, in.st_ino);
  }
  struct stat link, target;
  if (lstat(out_path, &link) != 0) {
    int e = errno;
    if (e == ENOENT) return check_output_place(out_path, err); /* a new file */
    if (e == ENOTDIR || e == ENAMETOOLONG || e == ELOOP) {
      return xp_fail(err, XPACK_ERR_ARG, "%s: not a path a file can be written at: %s", shown(out_path).text,
                     strerror(e));
    }
    return xp_fail(err, XPACK_ERR_IO, "%s: cannot look at the output: %s", out_path, strerror(e));
  }
  if (stat(out_path, &target) != 0) {
    const int e = errno;
    if (e == ENOENT) return check_output_place(out_path, err); /* a dangling link: replaced */
    return xp_fail(err, e == ELOOP ? XPACK_ERR_ARG : XPACK_ERR_IO, "%s: cannot follow the output's link: %s", out_path,
                   strerror(e));
  }
  if (!S_ISREG(target.st_mode)) {
    return xp_fail(err, XPACK_ERR_ARG,
                   "%s: the output is %s%s, not a regular file: xpack writes only regular files", out_path,
                   S_ISLNK(link.st_mode) ? "a symbolic link to " : "", xp_file_kind(target.st_mode));
  }
  for (size_t i = 0; i < input_count; i++) {
    struct stat in;
    if (stat(inputs[i], &in) == 0 && in.st_dev == target.st_dev && in.st_ino == target.st_ino) {
      return xp_fail(err, XPACK_ERR_ARG, "%s: the output is the input %s%s: writing it would destroy the input",
                     out_path, inputs[i], strcmp(inputs[i], out_path) == 0 ? "" : " (the same file by another name)");
    }
  }
  return check_output_place(out_path, err);
}

xpack_status xp_check_output_not_fd(const char* out_path, int input_fd, const char* input_name, xpack_error* err) {
  struct stat in, target;
  const int have_input = fstat(input_fd, &in) == 0;
  if (have_input) xp_temp_spare(in.st_dev, in.st_ino); /* read, not written: never taken by a clean-up */
  xpack_status st = xp_check_output(out_path, NULL, 0, err);
  if (st != XPACK_OK) return st;
  if (have_input && stat(out_path, &target) == 0 && in.st_dev == target.st_dev && in.st_ino == target.st_ino) {
    return xp_fail(err, XPACK_ERR_ARG, "%s: the output is the file holding the input %s: writing it would destroy it",
                   out_path, input_name);
  }
  return XPACK_OK;
}
