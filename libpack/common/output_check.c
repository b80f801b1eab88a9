/* Outputs that must not be written over: see output_check.h. */
#include "common/output_check.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "common/error.h"
#include "common/file_map.h"

xpack_status xp_check_output(const char* out_path, const char* const* inputs, size_t input_count, xpack_error* err) {
  /* An empty name would pass for a new file here and fail only at the rename, once all the work is done. */
  if (out_path[0] == '\0') {
    return xp_fail(err, XPACK_ERR_ARG, "the output is an empty path: expected the name of a file to write");
  }
  struct stat link, target;
  if (lstat(out_path, &link) != 0) {
    if (errno == ENOENT) return XPACK_OK; /* a new file (a missing folder on the way fails at the write) */
    return xp_fail(err, XPACK_ERR_IO, "%s: cannot look at the output: %s", out_path, strerror(errno));
  }
  if (stat(out_path, &target) != 0) return XPACK_OK; /* a dangling symbolic link: replaced, nothing is lost */
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
  return XPACK_OK;
}
