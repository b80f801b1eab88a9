/* xpack_cache_open_limits: XPACK_OPEN_SKIP_SMALL and XPACK_OPEN_SKIP_COLD compare the file's size with the
 * caller's limits, at the byte; a limit of 0, or no limits, is the default; a file skipped under a limit of the
 * caller's says which. Files of junk: a skipped file is never read, one that is not skipped is read and refused
 * as not a cache, so the outcome says which way the size went. The cold cases exit 77 (skipped) where the
 * kernel keeps a dropped file cached (tmpfs); the small ones run everywhere. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "expect.h"
#include "page_cache.h"
#include "xpack_loader.h"

static int write_junk(const char* path, size_t bytes) {
  FILE* f = fopen(path, "wb");
  if (f == NULL) return -1;
  for (size_t i = 0; i < bytes; i++) fputc((int)(i * 131u >> 7) & 0xff, f);
  return fclose(f);
}

/* 1 skipped (the refusal copied into why), 0 opened or refused as not a cache, -1 another outcome. */
static int skipped(const char* path, unsigned flags, const xpack_open_limits* limits, char* why, size_t why_size) {
  xpack_cache* c = NULL;
  xpack_error err;
  why[0] = 0;
  const xpack_status st = xpack_cache_open_limits(path, flags, limits, &c, &err);
  if (st != XPACK_OK) return st == XPACK_ERR_NOT_XPACK || st == XPACK_ERR_CORRUPT || st == XPACK_ERR_TRUNCATED ? 0 : -1;
  const int was_skipped = xpack_cache_provider(c) == NULL && xpack_cache_refusal(c) != NULL &&
                          strncmp(xpack_cache_refusal(c), "skipped unread", 14) == 0;
  if (xpack_cache_refusal(c)) snprintf(why, why_size, "%s", xpack_cache_refusal(c));
  xpack_cache_close(c);
  return was_skipped ? 1 : -1;
}

int main(void) {
  char dir[] = "/tmp/xpack-open-limits-XXXXXX";
  if (mkdtemp(dir) == NULL) return 1;
  char small[256], cold[256], why[512];
  snprintf(small, sizeof small, "%s/small.xpc", dir);
  snprintf(cold, sizeof cold, "%s/cold.xpc", dir);
  const size_t small_size = 300000; /* over the default 128 KiB, under 1 MiB */
  EXPECT(write_junk(small, small_size) == 0);

  /* XPACK_OPEN_SKIP_SMALL at the caller's limit, to the byte. */
  const xpack_open_limits above = {.small_cache_bytes = small_size + 1}, at = {.small_cache_bytes = small_size};
  EXPECT(skipped(small, XPACK_OPEN_SKIP_SMALL, &above, why, sizeof why) == 1);
  EXPECT_MSG(strcmp(why, "skipped unread (XPACK_OPEN_SKIP_SMALL): a file under the caller's limit of 300001 bytes") == 0,
             "refusal: %s", why);
  EXPECT(skipped(small, XPACK_OPEN_SKIP_SMALL, &at, why, sizeof why) == 0);
  EXPECT(skipped(small, 0, &above, why, sizeof why) == 0); /* a limit without its flag skips nothing */
  /* No limits, and a limit of 0, are the defaults: a file of 300000 bytes is read; one of 100000 is skipped
   * with the default's own reason. */
  const xpack_open_limits zero = {0};
  EXPECT(skipped(small, XPACK_OPEN_SKIP_SMALL, NULL, why, sizeof why) == 0);
  EXPECT(skipped(small, XPACK_OPEN_SKIP_SMALL, &zero, why, sizeof why) == 0);
  EXPECT(truncate(small, 100000) == 0);
  EXPECT(skipped(small, XPACK_OPEN_SKIP_SMALL, &zero, why, sizeof why) == 1);
  EXPECT_MSG(strstr(why, "a file under 128 KiB") != NULL, "refusal: %s", why);
  /* xpack_cache_open is the same as no limits. */
  xpack_cache* c = NULL;
  xpack_error err;
  EXPECT(xpack_cache_open(small, XPACK_OPEN_SKIP_SMALL, &c, &err) == XPACK_OK && xpack_cache_provider(c) == NULL);
  xpack_cache_close(c);

  /* Out of file descriptors is this process's limit, not the file's fault: XPACK_ERR_NOMEM (the tool's exit 4),
   * not XPACK_ERR_IO (exit 3, "an input is missing or malformed"; found by a review). */
  struct rlimit kept;
  EXPECT(getrlimit(RLIMIT_NOFILE, &kept) == 0);
  const int lowest_free = dup(STDERR_FILENO);
  EXPECT(lowest_free >= 0);
  close(lowest_free);
  struct rlimit none_left = {(rlim_t)lowest_free, kept.rlim_max};
  EXPECT(setrlimit(RLIMIT_NOFILE, &none_left) == 0);
  c = NULL;
  const xpack_status no_fd = xpack_cache_open(small, 0, &c, &err);
  EXPECT(setrlimit(RLIMIT_NOFILE, &kept) == 0);
  EXPECT_MSG(no_fd == XPACK_ERR_NOMEM && strstr(err.message, "Too many open files") != NULL, "out of descriptors: %s: %s",
             xpack_status_name(no_fd), no_fd == XPACK_OK ? "opened" : err.message);
  xpack_cache_close(c);

  /* XPACK_OPEN_SKIP_COLD at the caller's limit: a 2 MiB file out of the page cache is skipped under a 4 MiB
   * limit, read under the default 1 MiB. */
  int rc = failures ? 1 : 0;
  const size_t cold_size = 2u << 20;
  EXPECT(write_junk(cold, cold_size) == 0);
  if (bench_drop_from_page_cache(cold) != 0 || bench_resident_bytes(cold) != 0) {
    printf("cold cases skipped: the kernel keeps the file cached after POSIX_FADV_DONTNEED (tmpfs?)\n");
    if (rc == 0 && failures == 0) rc = 77;
  } else {
    const xpack_open_limits cold_limit = {.cold_cache_bytes = 4u << 20};
    EXPECT(skipped(cold, XPACK_OPEN_SKIP_COLD, &cold_limit, why, sizeof why) == 1);
    EXPECT_MSG(strncmp(why, "skipped unread (XPACK_OPEN_SKIP_COLD): a file under the caller's limit of 4194304 bytes "
                            "that is not in the page cache",
                       95) == 0,
               "refusal: %s", why);
    EXPECT(bench_drop_from_page_cache(cold) == 0);
    EXPECT(skipped(cold, XPACK_OPEN_SKIP_COLD, NULL, why, sizeof why) == 0);
  }
  unlink(small);
  unlink(cold);
  rmdir(dir);
  if (failures) return 1;
  printf("open limits: small and cold limits of the caller's honoured at the byte; 0 and NULL are the defaults\n");
  return rc;
}
