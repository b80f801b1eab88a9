/* Test-only LD_PRELOAD shim for cli_truncated_input: the first time the process maps the file named by
 * XPACK_TEST_TRUNCATE_ON_MAP, the shim truncates that file to 65536 bytes right after the mapping is made
 * and before the mapping is returned to xpack. Every later touch of a page past the new end raises SIGBUS,
 * at a point of the run fixed by the program and not by how fast this machine is (a poll from the test lost
 * the race on CI: a 192 MiB program packs in 0.2 s). */
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

static void* map_then_truncate(mmap_fn real, void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  void* mapping = real(addr, length, prot, flags, fd, offset);
  const char* target = getenv("XPACK_TEST_TRUNCATE_ON_MAP");
  if (mapping == MAP_FAILED || g_done || target == NULL || fd < 0 || !names_target(fd, target)) return mapping;
  g_done = 1;
  if (truncate(target, 65536) != 0) {
    perror("truncate_on_map: truncate");
    abort();
  }
  return mapping;
}

void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  static mmap_fn real;
  if (real == NULL) real = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
  return map_then_truncate(real, addr, length, prot, flags, fd, offset);
}

void* mmap64(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  static mmap_fn real;
  if (real == NULL) real = (mmap_fn)dlsym(RTLD_NEXT, "mmap64");
  return map_then_truncate(real, addr, length, prot, flags, fd, offset);
}
