/* Temporary files in an output's folder, for atomic replacement by rename, that a killed process does not
 * leave behind.
 *
 * Where the file system allows it (Linux's O_TMPFILE) a temporary file has no name at all until it is
 * complete: a process killed before then leaves nothing. It gets a name only for the instant between
 * xp_temp_link and the rename over the target. Elsewhere it is named "<folder>/.xpack-XXXXXX.tmp" from its
 * creation. Either way its name does not grow with the target's, and it holds an exclusive flock(2) lock
 * as long as its writer has it open; the kernel drops that lock when the process ends, however it ends.
 * Before an output's temporary file is made, xp_temp_sweep removes files of that exact form (the ".xpack-"
 * marker, six letters or digits, ".tmp") in the output's folder that are regular and that nobody holds
 * locked and that this process's user owns: leftovers of its killed writers, except this process's inputs
 * (xp_temp_spare). An output may not have such a name (xp_check_output). Shared scratch folders are never swept:
 * TMPDIR (or /tmp), and any folder everyone may write into with the sticky bit set. Nothing else is ever
 * removed, whatever its name looks like. The environment variable XPACK_TEST_NAMED_TEMP (any value) makes every temporary file a named
 * one, for tests of that path. */
#ifndef XPACK_SRC_TEMP_FILES_H
#define XPACK_SRC_TEMP_FILES_H

#include <sys/types.h>

/* The folder of path, where its temporary files go so that the rename over it is atomic (malloc'd, the
 * caller frees it), or NULL when out of memory. */
char* xp_folder_of(const char* path);

/* Marks a file this process reads (an input: xp_check_output calls it) as never a leftover, whatever its
 * name: someone may well verify or inflate a killed writer's file. */
void xp_temp_spare(dev_t dev, ino_t ino);

/* Whether a file name (no folder) has the exact form of xpack's temporary files: ".xpack-", six letters or
 * digits, ".tmp". */
int xp_is_temp_name(const char* name);
/* The length of "/" and such a name: a folder's path plus this must stay under PATH_MAX. */
#define XP_TEMP_NAME_IN_FOLDER 18

/* Removes killed writers' temporary files from an output's folder (see above). */
void xp_temp_sweep(const char* folder);

/* Opens a new temporary file in `folder` (O_RDWR, mode 0600), locked. *named is set to NULL when the file
 * has no name (O_TMPFILE), else to its path (malloc'd, the caller frees it and unlinks it when giving the
 * file up). Returns the descriptor, or -1 with errno set (ENOMEM, or the open's errno). */
int xp_temp_open(const char* folder, char** named);

/* As xp_temp_open, but the file never has a name once this returns (a named one is unlinked at once):
 * scratch space nobody else needs to find. */
int xp_temp_open_unnamed(const char* folder);

/* Gives the nameless temporary file fd (from xp_temp_open with *named NULL) a fresh temporary name in
 * `folder`, for a rename over its target. Returns 0 with *named set (malloc'd), or -1 with errno set. */
int xp_temp_link(int fd, const char* folder, char** named);
/* The caller renamed or removed the named temporary file `path` (from xp_temp_open or xp_temp_link):
 * xpack_remove_temporary_files no longer removes it. */
void xp_temp_forget_name(const char* path);

/* A path that opens the file open as fd again ("/proc/self/fd/N", or "/dev/fd/N" where there is no /proc),
 * for a reader that takes a path: also a file without a name. */
#define XP_FD_PATH_SIZE 32
void xp_fd_path(int fd, char out[XP_FD_PATH_SIZE]);

/* Write-behind: starts the kernel's write-back of [*started, end) of fd once at least `XP_WRITE_BEHIND_STEP`
 * bytes have been written past *started, without waiting for it, and advances *started. A writer calls it
 * after each append so the disk writes while it keeps producing, and the fsync before the rename finds
 * little left to do. Advice only: nothing is reported, and it does nothing where sync_file_range(2) does
 * not exist. */
#define XP_WRITE_BEHIND_STEP (8u << 20)
void xp_write_behind(int fd, unsigned long long* started, unsigned long long end);

#endif
