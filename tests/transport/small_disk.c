/* A file system with 16 free blocks of 4 KiB, as fstatvfs(2) and statvfs(2) report it to whatever process preloads
 * this library (LD_PRELOAD): for the test that inflate refuses an output its file system has no room for before it
 * writes any of it (no_room.sh), without a file system that small to mount. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/statvfs.h>

static void small(struct statvfs* fs) {
  memset(fs, 0, sizeof *fs);
  fs->f_bsize = fs->f_frsize = 4096;
  fs->f_blocks = 1024;
  fs->f_bfree = fs->f_bavail = 16;
  fs->f_files = 1024;
  fs->f_ffree = fs->f_favail = 512;
  fs->f_namemax = 255;
}

int fstatvfs(int fd, struct statvfs* fs) {
  (void)fd;
  small(fs);
  return 0;
}

int statvfs(const char* path, struct statvfs* fs) {
  (void)path;
  small(fs);
  return 0;
}

/* Where a caller is built with _FILE_OFFSET_BITS=64, glibc's header names the 64-bit entry points. */
int fstatvfs64(int fd, struct statvfs64* fs) {
  (void)fd;
  small((struct statvfs*)fs); /* one layout on 64-bit Linux */
  return 0;
}

int statvfs64(const char* path, struct statvfs64* fs) {
  (void)path;
  small((struct statvfs*)fs);
  return 0;
}
