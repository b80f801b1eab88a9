/* libpack's transport API on one mappable cache file: compress at the lowest and highest levels, inflate
 * back to the same bytes (also in place), the argument errors, a damaged region refused by compress, and
 * outputs that cannot be written. Works on any cache, so C API caches (xpack-subgraphs) are covered too.
 *
 * usage: transport_api PLAIN.xpc WORKDIR */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/expect.h"
#include "xpack.h"

static uint8_t* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t* b = malloc(n > 0 ? (size_t)n : 1);
  if (b != NULL && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return b;
}

static void write_file(const char* path, const void* bytes, size_t n) {
  FILE* f = fopen(path, "wb");
  if (f == NULL || fwrite(bytes, 1, n, f) != n) {
    printf("FAIL: cannot write %s\n", path);
    exit(1);
  }
  fclose(f);
}

static int same_as(const char* path, const uint8_t* bytes, size_t n) {
  size_t m = 0;
  uint8_t* got = read_file(path, &m);
  int same = got != NULL && m == n && memcmp(got, bytes, n) == 0;
  free(got);
  return same;
}

static int exists(const char* path) { return access(path, F_OK) == 0; }

/* Files in dir other than those named. */
static int strays(const char* dir, const char* const* keep, size_t nkeep) {
  DIR* d = opendir(dir);
  int n = 0;
  for (struct dirent* e; d != NULL && (e = readdir(d)) != NULL;) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    int kept = 0;
    for (size_t i = 0; i < nkeep; i++) kept |= strcmp(e->d_name, keep[i]) == 0;
    if (!kept) {
      printf("stray file: %s/%s\n", dir, e->d_name);
      n++;
    }
  }
  if (d) closedir(d);
  return n;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: transport_api PLAIN.xpc WORKDIR\n");
    return 2;
  }
  const char* plain = argv[1];
  const char* dir = argv[2];
  char z[4096], back[4096], bad[4096], inplace[4096], nowhere[4096];
  snprintf(z, sizeof z, "%s/z.xpc", dir);
  snprintf(back, sizeof back, "%s/back.xpc", dir);
  snprintf(bad, sizeof bad, "%s/bad.xpc", dir);
  snprintf(inplace, sizeof inplace, "%s/inplace.xpc", dir);
  snprintf(nowhere, sizeof nowhere, "%s/no/such/dir/out.xpc", dir);
  size_t plain_size = 0;
  uint8_t* plain_bytes = read_file(plain, &plain_size);
  if (plain_bytes == NULL) {
    printf("FAIL: cannot read %s\n", plain);
    return 1;
  }
  xpack_error err;
  xpack_transport_stats stats;

  /* Argument errors: nothing written. */
  EXPECT_MSG(xpack_compress_file(plain, z, 0, NULL, &err) == XPACK_ERR_ARG && strstr(err.message, "level 0"), "level 0");
  EXPECT_MSG(xpack_compress_file(plain, z, XPACK_ZSTD_LEVEL_MAX + 1, NULL, &err) == XPACK_ERR_ARG, "level 20");
  EXPECT_MSG(xpack_compress_file(NULL, z, 3, NULL, &err) == XPACK_ERR_ARG, "NULL input");
  EXPECT_MSG(xpack_inflate_file(plain, NULL, NULL, &err) == XPACK_ERR_ARG, "NULL output");
  EXPECT_MSG(xpack_inflate_file(plain, z, NULL, &err) == XPACK_ERR_ARG && strstr(err.message, "mappable form"),
             "inflate of a mappable file: %s", err.message);
  EXPECT_MSG(!exists(z), "an argument error wrote %s", z);

  /* Both ends of the level range round-trip to the same bytes. */
  for (int level = XPACK_ZSTD_LEVEL_MIN; level <= XPACK_ZSTD_LEVEL_MAX; level += XPACK_ZSTD_LEVEL_MAX - 1) {
    EXPECT_MSG(xpack_compress_file(plain, z, level, &stats, &err) == XPACK_OK, "compress level %d: %s", level,
               err.message);
    EXPECT_MSG(stats.input_size == plain_size && stats.regions > 0 && stats.frame_bytes > 0 &&
               stats.frame_bytes < stats.output_size,
           "compress stats");
    uint64_t frames = stats.frame_bytes, regions = stats.region_bytes;
    EXPECT_MSG(xpack_inflate_file(z, back, &stats, &err) == XPACK_OK, "inflate level %d: %s", level, err.message);
    EXPECT_MSG(stats.output_size == plain_size && stats.frame_bytes == frames && stats.region_bytes == regions,
               "inflate stats");
    EXPECT_MSG(same_as(back, plain_bytes, plain_size), "level %d: inflate(compress(x)) differs from x", level);
    EXPECT_MSG(xpack_compress_file(z, bad, level, NULL, &err) == XPACK_ERR_ARG && strstr(err.message, "transport form"),
               "compress of a transport file: %s", err.message);
  }
  /* Several compression threads make the same bytes as one (here z holds the level-19 file from the loop). */
  {
    size_t one_size = 0;
    uint8_t* one = read_file(z, &one_size);
    for (int threads = 2; threads <= 5; threads += 3) {
      char many[4096];
      snprintf(many, sizeof many, "%s/threads%d.xpc", dir, threads);
      EXPECT_MSG(xpack_compress_file_threads(plain, many, XPACK_ZSTD_LEVEL_MAX, threads, NULL, &err) == XPACK_OK,
                 "compress with %d threads: %s", threads, err.message);
      EXPECT_MSG(one != NULL && same_as(many, one, one_size), "%d threads made other bytes than one", threads);
      unlink(many);
    }
    free(one);
    EXPECT_MSG(xpack_compress_file_threads(plain, bad, 3, 0, NULL, &err) == XPACK_ERR_ARG && strstr(err.message, "threads 0"),
               "0 threads: %s", err.message);
    EXPECT_MSG(!exists(bad), "a thread-count error wrote %s", bad);
  }
  /* The transport file opens for inspection, and every region record describes its frame. */
  xpack_file* f;
  EXPECT_MSG(xpack_file_open(z, &f, &err) == XPACK_OK, "xpack_file_open of the transport form: %s", err.message);
  xpack_file_info info;
  xpack_file_get_info(f, &info);
  EXPECT_MSG(info.flags == 1 && info.data_offset == 64, "transport header: flags %u, data_offset %llu", info.flags,
             (unsigned long long)info.data_offset);
  uint64_t next = 64;
  for (uint64_t i = 0; i < info.region_count; i++) {
    xpack_file_region r;
    xpack_file_get_region(f, i, &r);
    EXPECT_MSG(r.offset == next && r.stored_size > 0, "region %llu at %llu, expected %llu", (unsigned long long)i,
               (unsigned long long)r.offset, (unsigned long long)next);
    next = r.offset + r.stored_size;
  }
  EXPECT_MSG(next == info.data_offset + info.data_size, "data area end");
  xpack_file_close(f);
  /* The loader refuses it, naming inflate. */
  xpack_cache* cache;
  EXPECT_MSG(xpack_cache_open(z, 0, &cache, &err) == XPACK_ERR_TRANSPORT && strstr(err.message, "xpack inflate"),
             "loader on the transport form: %s", err.message);

  /* In place: refused, the input left as it was (an output is never one of the inputs: docs/TRUST.md). */
  size_t z_size = 0;
  uint8_t* z_bytes = read_file(z, &z_size);
  write_file(inplace, z_bytes, z_size);
  EXPECT_MSG(xpack_inflate_file(inplace, inplace, NULL, &err) == XPACK_ERR_ARG && strstr(err.message, "is the input"),
             "in place: %s", err.message);
  EXPECT_MSG(same_as(inplace, z_bytes, z_size), "in-place inflate changed its input");

  /* An output in a folder that does not exist: XPACK_ERR_ARG naming it, before anything is read. */
  EXPECT_MSG(xpack_inflate_file(z, nowhere, NULL, &err) == XPACK_ERR_ARG && strstr(err.message, nowhere) &&
                 strstr(err.message, "does not exist"),
             "missing folder: %s", err.message);
  EXPECT_MSG(xpack_compress_file(plain, nowhere, 3, NULL, &err) == XPACK_ERR_ARG, "missing folder, compress: %s",
             err.message);
  /* One the file system will not create (procfs): XPACK_ERR_IO naming it. */
  const char* unwritable = "/proc/xpack-transport-api.xpc";
  EXPECT_MSG(xpack_inflate_file(z, unwritable, NULL, &err) == XPACK_ERR_IO && strstr(err.message, unwritable),
             "unwritable: %s", err.message);
  EXPECT_MSG(xpack_compress_file(plain, unwritable, 3, NULL, &err) == XPACK_ERR_IO, "unwritable compress: %s",
             err.message);

  /* A damaged region is refused by compress (never re-checksummed into a sound-looking file). */
  EXPECT_MSG(xpack_file_open(plain, &f, &err) == XPACK_OK, "open plain");
  xpack_file_region r0;
  xpack_file_get_region(f, 0, &r0);
  xpack_file_close(f);
  uint8_t* damaged = malloc(plain_size);
  memcpy(damaged, plain_bytes, plain_size);
  damaged[r0.offset + r0.size / 2] ^= 0x01;
  write_file(bad, damaged, plain_size);
  unlink(z);
  EXPECT_MSG(xpack_compress_file(bad, z, 1, NULL, &err) == XPACK_ERR_CORRUPT && strstr(err.message, "region 0 at offset"),
             "compress of a damaged region: %s", err.message);
  EXPECT_MSG(!exists(z), "compress of a damaged file wrote output");
  damaged[r0.offset + r0.size / 2] ^= 0x01; /* the last region damaged instead: found by a worker thread */
  xpack_file_region last;
  EXPECT_MSG(xpack_file_open(plain, &f, &err) == XPACK_OK, "open plain");
  xpack_file_get_info(f, &info);
  xpack_file_get_region(f, info.region_count - 1, &last);
  xpack_file_close(f);
  damaged[last.offset + last.size / 2] ^= 0x01;
  write_file(bad, damaged, plain_size);
  char region_name[64];
  snprintf(region_name, sizeof region_name, "region %llu at offset", (unsigned long long)(info.region_count - 1));
  EXPECT_MSG(xpack_compress_file_threads(bad, z, 1, 2, NULL, &err) == XPACK_ERR_CORRUPT && strstr(err.message, region_name),
             "threaded compress of a damaged last region: %s", err.message);
  EXPECT_MSG(!exists(z), "threaded compress of a damaged file wrote output");
  unlink(bad);
  static const char* const keep[] = {"back.xpc", "inplace.xpc"};
  EXPECT_MSG(strays(dir, keep, 2) == 0, "temporary files left behind");
  unlink(back);
  unlink(inplace);
  free(damaged);
  free(z_bytes);
  free(plain_bytes);
  printf("transport_api: %s\n", failures ? "FAILED" : "all checks passed");
  return failures ? 1 : 0;
}
