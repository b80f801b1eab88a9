/* The disk's floors, with no packing and no XNNPACK at all.
 * Writing: a file of the cache's size where the cache goes, as pack writes it (8 MiB writes, write-back
 * started behind them, fsync before the end). Pack cannot finish faster than that, whatever packing costs;
 * the report sets its wall time against both.
 * Reading: the cache file itself, dropped from the page cache first, read through in 8 MiB reads. A cold
 * start that serves every packed byte from the file cannot be faster than that plus the warm start. */
#ifdef __linux__
#define _GNU_SOURCE /* sync_file_range */
#endif
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd_bench.h"

#define DISK_CHUNK (8u << 20)

double bench_disk_write_ms(const char* dir, uint64_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/.xpack-bench-disk.XXXXXX", dir);
  /* The file has a name only between these two calls: the signals that make bench remove its folder
   * (cmd_bench.c) wait until it has none, else the folder would stay with the file in it. */
  sigset_t stop, before;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGHUP);
  sigaddset(&stop, SIGQUIT);
  sigprocmask(SIG_BLOCK, &stop, &before);
  int fd = mkstemp(path);
  if (fd >= 0) unlink(path);
  sigprocmask(SIG_SETMASK, &before, NULL);
  if (fd < 0) return -1;
  uint8_t* chunk = malloc(DISK_CHUNK);
  double ms = -1;
  if (chunk != NULL) {
    for (size_t i = 0; i < DISK_CHUNK; i++) chunk[i] = (uint8_t)(i * 2654435761u >> 24); /* not zeros */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int ok = 1;
    for (uint64_t done = 0; ok && done < bytes;) {
      size_t n = bytes - done < DISK_CHUNK ? (size_t)(bytes - done) : DISK_CHUNK;
      ok = pwrite(fd, chunk, n, (off_t)done) == (ssize_t)n;
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
      (void)sync_file_range(fd, (off_t)done, (off_t)n, SYNC_FILE_RANGE_WRITE);
#endif
      done += n;
    }
    ok = ok && fsync(fd) == 0;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (ok) ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    free(chunk);
  }
  close(fd);
  return ms;
}

double bench_disk_read_cold_ms(const char* path) {
  if (bench_drop_from_page_cache(path) != 0) return -1;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  uint8_t* chunk = malloc(DISK_CHUNK);
  double ms = -1;
  if (chunk != NULL) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ssize_t n;
    off_t at = 0;
    while ((n = pread(fd, chunk, DISK_CHUNK, at)) > 0) at += n;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (n == 0) ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    free(chunk);
  }
  close(fd);
  return ms;
}
