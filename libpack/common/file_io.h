/* Positioned writes and range copies on open files; neither moves a file position. */
#ifndef XPACK_SRC_FILE_IO_H
#define XPACK_SRC_FILE_IO_H

#include <stddef.h>
#include <stdint.h>

/* Writes n bytes at offset, retrying short writes and EINTR. Returns 0, or -1 with errno set. */
int xp_write_at(int fd, const void* bytes, size_t n, uint64_t offset);

/* Copies size bytes at from_offset of `from` to to_offset of `to`. Uses copy_file_range(2), which moves the
 * bytes page cache to page cache without a trip through user memory, and falls back to pread/pwrite through
 * a 1 MiB buffer where the kernel or file system cannot.
 * Returns 0, or -1 with errno set (EIO when `from` ends before the range does). */
int xp_copy_range(int from, uint64_t from_offset, int to, uint64_t to_offset, uint64_t size);

#endif
