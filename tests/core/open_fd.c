/* xpack_cache_open_fd's own promises, on a cache stored inside another file (open_fd.sh builds them): mapped in
 * place at an offset on XNNPACK's alignment, read into memory elsewhere; the caller's descriptor may be closed
 * at once; XPACK_OPEN_SKIP_SMALL and XPACK_OPEN_SKIP_COLD judge the range, not the file, and the warm-up reads
 * the range; bad descriptors and ranges are refused naming the cache and what was expected.
 *
 *   open_fd OUTER OFFSET SIZE OTHER  (the cache is the SIZE bytes at OFFSET of OUTER; another XNNPACK build's
 *                                      copy of it, refused whole here, lies at OTHER) */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expect.h"
#include "page_cache.h"
#include "xpack.h"

/* Whether this process maps path (a line of /proc/self/maps ends with it). */
static int mapped_here(const char* path) {
  char real[4096], line[8192];
  if (realpath(path, real) == NULL) return 0;
  FILE* f = fopen("/proc/self/maps", "r");
  if (f == NULL) return 0;
  int found = 0;
  const size_t n = strlen(real);
  while (!found && fgets(line, sizeof line, f)) {
    size_t len = strlen(line);
    if (len > 0 && line[len - 1] == '\n') line[--len] = 0;
    found = len >= n && strcmp(line + len - n, real) == 0;
  }
  fclose(f);
  return found;
}

static xpack_cache* open_at(const char* outer, uint64_t offset, uint64_t size, unsigned flags,
                            const xpack_open_limits* limits, xpack_status* status, xpack_error* err) {
  const int fd = open(outer, O_RDONLY | O_CLOEXEC);
  xpack_cache* c = NULL;
  *status = fd < 0 ? XPACK_ERR_IO : xpack_cache_open_fd(fd, offset, size, "outer:cache", flags, limits, &c, err);
  if (fd >= 0) close(fd); /* at once: whatever the loader needs later, it holds itself */
  return c;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: open_fd OUTER OFFSET SIZE OTHER\n");
    return 2;
  }
  if (xnn_initialize(NULL) != xnn_status_success) return 1;
  const char* outer = argv[1];
  const uint64_t offset = strtoull(argv[2], NULL, 0), size = strtoull(argv[3], NULL, 0);
  const uint64_t other = strtoull(argv[4], NULL, 0);
  xpack_status st;
  xpack_error err;

  /* In place, or read: the offset decides */
  xpack_cache* c = open_at(outer, offset, size, 0, NULL, &st, &err);
  EXPECT_MSG(st == XPACK_OK && c != NULL, "%s", err.message);
  if (c == NULL) return 1;
  EXPECT(xpack_cache_refusal(c) == NULL && xpack_cache_entry_count(c) > 0 && xpack_cache_file_size(c) == size);
  const int in_place = offset % xpack_xnn_alignment() == 0;
  EXPECT_MSG(mapped_here(outer) == in_place, "offset %llu: %s, expected %s", (unsigned long long)offset,
             mapped_here(outer) ? "mapped" : "not mapped", in_place ? "mapped" : "read");
  const uint32_t entries = xpack_cache_entry_count(c);
  xpack_cache_prefetch(c);
  xpack_cache_close(c);
  EXPECT(!mapped_here(outer));
  c = open_at(outer, offset, size, XPACK_OPEN_READ | XPACK_OPEN_STRICT | XPACK_OPEN_PROBE_EARLY, NULL, &st, &err);
  EXPECT(st == XPACK_OK && xpack_cache_entry_count(c) == entries && !mapped_here(outer));
  xpack_cache_close(c);

  /* Skipping judges the range */
  const xpack_open_limits above = {.small_cache_bytes = size + 1, .cold_cache_bytes = size + 1};
  c = open_at(outer, offset, size, XPACK_OPEN_SKIP_SMALL, &above, &st, &err);
  EXPECT(st == XPACK_OK && xpack_cache_provider(c) == NULL && xpack_cache_file_size(c) == size &&
         strstr(xpack_cache_refusal(c), "XPACK_OPEN_SKIP_SMALL") != NULL);
  xpack_cache_close(c);
  c = open_at(outer, offset, size, XPACK_OPEN_SKIP_SMALL, NULL, &st, &err); /* under 128 KiB */
  EXPECT(st == XPACK_OK && (xpack_cache_provider(c) == NULL) == (size < XPACK_SMALL_CACHE_BYTES));
  xpack_cache_close(c);
  if (bench_warm_page_cache(outer) == 0) {
    c = open_at(outer, offset, size, XPACK_OPEN_SKIP_COLD, &above, &st, &err);
    EXPECT_MSG(st == XPACK_OK && xpack_cache_provider(c) != NULL, "warm: %s", xpack_cache_refusal(c));
    xpack_cache_close(c);
  }
  if (bench_drop_from_page_cache(outer) != 0 || bench_resident_bytes(outer) != 0) {
    printf("open_fd: the kernel kept %s in the page cache (tmpfs?): skipping as cold is not tested here\n", outer);
  } else {
    c = open_at(outer, offset, size, XPACK_OPEN_SKIP_COLD, &above, &st, &err);
    EXPECT(st == XPACK_OK && xpack_cache_provider(c) == NULL &&
           strstr(xpack_cache_refusal(c), "XPACK_OPEN_SKIP_COLD") != NULL);
    EXPECT(bench_resident_bytes(outer) == 0); /* skipping read nothing */
    xpack_cache_warm_up(c); /* through the loader's own descriptor: the caller's is closed */
    int resident = 0;
    for (int i = 0; i < 100 && !resident; i++) {
      resident = bench_resident_range(outer, offset, size) == (int64_t)size;
      if (!resident) usleep(50000);
    }
    EXPECT_MSG(resident, "the warm-up did not read the cache's range: %lld of %llu bytes",
               (long long)bench_resident_range(outer, offset, size), (unsigned long long)size);
    xpack_cache_close(c);
  }

  /* One cache per class of CPU in the APK: the one this process serves is kept */
  const int fd = open(outer, O_RDONLY | O_CLOEXEC);
  const xpack_cache_range ranges[] = {
      {fd, UINT64_MAX - 1, size, "past-the-end"}, {fd, other, size, "other-build"}, {fd, offset, size, "this-build"}};
  xpack_cache_candidate found[3];
  size_t chosen = 9;
  EXPECT(xpack_cache_open_best_fd(ranges, 3, XPACK_OPEN_PROBE_EARLY, NULL, &c, &chosen, found, &err) == XPACK_OK);
  EXPECT(chosen == 2 && xpack_cache_refusal(c) == NULL && xpack_cache_entry_count(c) == entries);
  EXPECT(found[0].tried && found[0].open_error.status == XPACK_ERR_TRUNCATED &&
         strstr(found[0].open_error.message, "past-the-end"));
  EXPECT(found[1].tried && found[1].open_error.status == XPACK_OK && found[1].refused_whole &&
         found[1].entries_served == 0);
  EXPECT(found[2].tried && found[2].entries_served == entries && !found[2].refused_whole);
  xpack_cache_close(c);
  const xpack_cache_range first_served[] = {ranges[2], ranges[1]};
  EXPECT(xpack_cache_open_best_fd(first_served, 2, 0, NULL, &c, &chosen, found, &err) == XPACK_OK && chosen == 0 &&
         !found[1].tried); /* served whole: the rest is not opened */
  xpack_cache_close(c);
  EXPECT(xpack_cache_open_best_fd(ranges, 1, 0, NULL, &c, &chosen, NULL, &err) == XPACK_ERR_TRUNCATED &&
         c == NULL && strstr(err.message, "past-the-end"));
  EXPECT(xpack_cache_open_best_fd(NULL, 1, 0, NULL, &c, &chosen, NULL, &err) == XPACK_ERR_ARG);
  close(fd);

  /* Refused, naming the cache and what was expected */
  const int64_t outer_size = bench_file_size(outer);
  EXPECT(open_at(outer, offset, (uint64_t)outer_size, 0, NULL, &st, &err) == NULL && st == XPACK_ERR_TRUNCATED &&
         strstr(err.message, "outer:cache") && strstr(err.message, "end past the file"));
  EXPECT(open_at(outer, UINT64_MAX, 64, 0, NULL, &st, &err) == NULL && st == XPACK_ERR_TRUNCATED);
  EXPECT(open_at(outer, offset, UINT64_MAX, 0, NULL, &st, &err) == NULL && st == XPACK_ERR_TRUNCATED);
  EXPECT(open_at(outer, offset, 16, 0, NULL, &st, &err) == NULL && st == XPACK_ERR_TRUNCATED &&
         strstr(err.message, "too short"));
  EXPECT(open_at(outer, offset, 0, 0, NULL, &st, &err) == NULL && st == XPACK_ERR_NOT_XPACK);
  EXPECT_MSG(open_at(outer, offset + 1, size - 1, 0, NULL, &st, &err) == NULL && st != XPACK_OK &&
             strstr(err.message, "outer:cache"), "%s", err.message); /* the footer then names another size */
  EXPECT(open_at(outer, offset, size - 1, 0, NULL, &st, &err) == NULL && st != XPACK_OK); /* footer cut */
  EXPECT(!mapped_here(outer));
  xpack_cache* none = NULL;
  EXPECT(xpack_cache_open_fd(-1, 0, size, "x", 0, NULL, &none, &err) == XPACK_ERR_ARG && strstr(err.message, "descriptor"));
  EXPECT(xpack_cache_open_fd(0, 0, size, NULL, 0, NULL, &none, &err) == XPACK_ERR_ARG && strstr(err.message, "name"));
  EXPECT(xpack_cache_open_fd(0, 0, size, "x", 0x8000, NULL, &none, &err) == XPACK_ERR_ARG);
  EXPECT(xpack_cache_open_fd(0, 0, size, "x", 0, NULL, NULL, &err) == XPACK_ERR_ARG);
  int pipe_fds[2];
  EXPECT(pipe(pipe_fds) == 0);
  EXPECT(xpack_cache_open_fd(pipe_fds[0], 0, size, "pipe", 0, NULL, &none, &err) == XPACK_ERR_IO &&
         strstr(err.message, "pipe: the descriptor is a FIFO"));
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  const int dir = open("/", O_RDONLY | O_DIRECTORY);
  EXPECT(xpack_cache_open_fd(dir, 0, size, "root", 0, NULL, &none, &err) == XPACK_ERR_IO && strstr(err.message, "folder"));
  close(dir);
  EXPECT(none == NULL);
  printf("open_fd at %llu (%s): %s\n", (unsigned long long)offset, in_place ? "mapped in place" : "read",
         failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
