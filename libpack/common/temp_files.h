/* Temporary files beside an output file, for atomic replacement by rename.
 *
 * A writer's temporary file is named ".<target name>.XXXXXX" and holds an exclusive flock(2) lock for as
 * long as the writer has it open. The kernel drops that lock when the process ends, however it ends, so a
 * temporary file nobody holds locked was left by a writer that was killed (SIGKILL, power loss is the
 * other case: then the lock is gone too). Creating a temporary file removes such leftovers of the same
 * target; the files of writers still running, and of other targets, are left alone. */
#ifndef XPACK_SRC_TEMP_FILES_H
#define XPACK_SRC_TEMP_FILES_H

/* Creates the temporary file named by `path_template` (ending in "XXXXXX", rewritten in place as
 * mkstemp does), locks it, and removes unlocked files of the same pattern in its directory.
 * Returns the open descriptor (O_RDWR, mode 0600), or -1 with errno set by mkstemp. When the file system
 * offers no locks the file is still created, but nothing is removed. */
int xp_temp_create(char* path_template);

/* Write-behind: starts the kernel's write-back of [*started, end) of fd once at least `XP_WRITE_BEHIND_STEP`
 * bytes have been written past *started, without waiting for it, and advances *started. A writer calls it
 * after each append so the disk writes while it keeps producing, and the fsync before the rename finds
 * little left to do. Advice only: nothing is reported, and it does nothing where sync_file_range(2) does
 * not exist. */
#define XP_WRITE_BEHIND_STEP (8u << 20)
void xp_write_behind(int fd, unsigned long long* started, unsigned long long end);

#endif
