/* What xpack refuses to write over, and where it cannot write, checked before anything is written.
 *
 * An output replaces what is at its path by a rename (safe_write.h), so whatever was there is gone: an
 * input of the same command would be destroyed, and a device, FIFO, socket or folder would turn into a
 * regular file. A symbolic link to a regular file is replaced itself (the file it pointed to stays as it
 * was), as rename(2) does; one to anything else is refused as what it points to would be. A symbolic link in
 * /proc, or a path whose links lead to one (/proc/self/fd/N, /dev/stdout, /dev/fd/N), names a process's
 * descriptor: refused, since the rename would replace the link and write nothing where it leads. So is "-",
 * which is no file. The inputs' files are spared by the clean-up of killed writers' files (temp_files.h). */
#ifndef XPACK_SRC_OUTPUT_CHECK_H
#define XPACK_SRC_OUTPUT_CHECK_H

#include <stddef.h>

#include "xpack_status.h"

/* XPACK_OK when out_path names nothing yet, or a regular file (or a symbolic link, dangling or to a regular
 * file) that is none of the input_count files of `inputs` (which may be NULL when input_count is 0). The
 * same file is the same device and inode, whatever the name: another path, a hard or a symbolic link.
 * Also checks, so that a slip fails before the work and not at the rename, that a file can be made there:
 * out_path does not end in '/', its folder exists and is a folder, its last component fits the file system's
 * NAME_MAX, and the effective ids may write into the folder.
 * Errors: XPACK_ERR_ARG, naming out_path and what it is, which input it is, or what is wrong with the path
 * (a trailing '/', a missing folder, a component that is not a folder, a name too long, a link loop, a path
 * into /proc, "-");
 * XPACK_ERR_IO when out_path or its folder cannot be looked at, or the folder cannot be written (permission,
 * a read-only file system). */
xpack_status xp_check_output(const char* out_path, const char* const* inputs, size_t input_count, xpack_error* err);

/* As xp_check_output for an input read from the open file input_fd (a cache inside an archive, named
 * input_name): out_path may not be that file. Errors: as xp_check_output. */
xpack_status xp_check_output_not_fd(const char* out_path, int input_fd, const char* input_name, xpack_error* err);

#endif
