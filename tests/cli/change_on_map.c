/* Test-only LD_PRELOAD shim that changes a file the moment the process first maps it, right after the
 * mapping is made and before it is returned to xpack: at a point of the run fixed by the program and not by
 * how fast this machine is (a poll from the test lost the race on CI: a 192 MiB program packs in 0.2 s).
 *   XPACK_TEST_TRUNCATE_ON_MAP=FILE   truncates FILE to 65536 bytes: every later touch of a page past the
 *                                     new end raises SIGBUS (cli_truncated_input);
 *   XPACK_TEST_REPLACE_ON_MAP=FILE and XPACK_TEST_REPLACE_WITH=OTHER
 *                                     renames OTHER over FILE: the mapping keeps the old file, and whatever
 *                                     opens FILE by name afterwards gets the new one (cli_replaced_input);
 *   XPACK_TEST_TRUNCATE_ON_WRITE=FILE  truncates FILE to 65536 bytes at the process's first pwrite, after
 *                                     everything read before writing (export's check of the cache) has read
 *                                     it whole: bytes written from its mapping past the new end then fail
 *                                     with EFAULT rather than raise SIGBUS (cli_truncated_input);
 *   XPACK_TEST_MKFIFO_ON_WRITE=PATH    makes a FIFO at PATH at the first pwrite: something that appears at
 *                                     the output while the command works (cli_changed_output). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

typedef void* (*mmap_fn)(void*, size_t, int, int, int, off_t);

static int g_done;

static int names_target(int fd, const char* target) {
  struct stat of_fd, of_target;
  if (fstat(fd, &of_fd) != 0 || stat(target, &of_target) != 0) return 0;
  return of_fd.st_dev == of_target.st_dev && of_fd.st_ino == of_target.st_ino;
}

static void change(const char* what, int failed) {
  if (failed) {
    perror(what);
    abort();
  }
}

static void* map_then_change(mmap_fn real, void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  void* mapping = real(addr, length, prot, flags, fd, offset);
  if (mapping == MAP_FAILED || g_done || fd < 0) return mapping;
  const char* truncated = getenv("XPACK_TEST_TRUNCATE_ON_MAP");
  const char* replaced = getenv("XPACK_TEST_REPLACE_ON_MAP");
  const char* replacement = getenv("XPACK_TEST_REPLACE_WITH");
  if (truncated != NULL && names_target(fd, truncated)) {
    g_done = 1;
    change("change_on_map: truncate", truncate(truncated, 65536) != 0);
  } else if (replaced != NULL && replacement != NULL && names_target(fd, replaced)) {
    g_done = 1;
    change("change_on_map: rename", rename(replacement, replaced) != 0);
  }
  return mapping;
}

void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  static mmap_fn real;
  if (real == NULL) real = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
  return map_then_change(real, addr, length, prot, flags, fd, offset);
}

void* mmap64(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  static mmap_fn real;
  if (real == NULL) real = (mmap_fn)dlsym(RTLD_NEXT, "mmap64");
  return map_then_change(real, addr, length, prot, flags, fd, offset);
}

typedef ssize_t (*pwrite_fn)(int, const void*, size_t, off_t);

static void change_before_first_write(void) {
  static int done;
  const char* truncated = getenv("XPACK_TEST_TRUNCATE_ON_WRITE");
  const char* fifo = getenv("XPACK_TEST_MKFIFO_ON_WRITE");
  if (done) return;
  done = 1;
  if (truncated != NULL) change("change_on_map: truncate", truncate(truncated, 65536) != 0);
  if (fifo != NULL) change("change_on_map: mkfifo", mkfifo(fifo, 0600) != 0);
}

ssize_t pwrite(int fd, const void* bytes, size_t n, off_t offset) {
  static pwrite_fn real;
  if (real == NULL) real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite");
  change_before_first_write();
  return real(fd, bytes, n, offset);
}

ssize_t pwrite64(int fd, const void* bytes, size_t n, off_t offset) {
  static pwrite_fn real;
  if (real == NULL) real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite64");
  change_before_first_write();
  return real(fd, bytes, n, offset);
}
