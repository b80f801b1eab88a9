/* export --executorch copies and sorts one name per entry (kernel name + bias name). A cache whose entries
 * share one long identity, far more than any pack makes them (here one weight recorded under 20,000 seeds by
 * scripted provider calls), is refused before the copies: they grow with entries x name length, not with
 * the file. The same weight under a few seeds, as packing families make it, still exports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "expect.h"
#include "xpack.h"

/* A module-path identity of `len` bytes (libpack/et/IDENTITY.md): exportable, so export names it. */
static void module_path_identity(char* out, size_t len, char fill) {
  static const char kSuffix[] = "#xxh3-128:0123456789abcdef0123456789abcdef:64";
  const size_t suffix = sizeof kSuffix - 1;
  memset(out, fill, len - suffix);
  memcpy(out + len - suffix, kSuffix, suffix + 1);
}

/* Records one fp32 weight (and its bias) under `seeds` seeds into path, both named by module-path identities
 * of id_len bytes. */
static void write_cache(const char* path, int seeds, size_t id_len) {
  static float kernel[16], bias[4];
  static char kernel_id[1001], bias_id[1001];
  module_path_identity(kernel_id, id_len, 'k');
  module_path_identity(bias_id, id_len, 'b');
  xpack_error err;
  xpack_writer* w = NULL;
  EXPECT(xpack_writer_create(path, NULL, &w, &err) == XPACK_OK);
  EXPECT(xpack_writer_bind(w, kernel, kernel_id, id_len, &err) == XPACK_OK);
  EXPECT(xpack_writer_bind(w, bias, bias_id, id_len, &err) == XPACK_OK);
  const xpack_family fc = {XPACK_OP_FULLY_CONNECTED, xnn_datatype_fp32, xnn_datatype_fp32, xnn_datatype_fp32,
                           xnn_datatype_fp32, 0, 0};
  EXPECT_MSG(xpack_writer_bind_family(w, kernel, &fc, &err) == XPACK_OK, "%s", err.message);
  struct xnn_weights_cache_provider* p = xpack_writer_provider(w);
  for (int seed = 1; seed <= seeds; seed++) {
    struct xnn_weights_cache_look_up_key key = {.seed = (uint32_t)seed, .kernel = kernel, .bias = bias};
    unsigned char* packed = p->reserve_space(p->context, 64);
    EXPECT(packed != NULL);
    memset(packed, 0xAB, 64);
    EXPECT(p->look_up_or_insert(p->context, &key, packed, 64) != SIZE_MAX);
  }
  xpack_writer_stats stats;
  xpack_writer_stats_get(w, &stats);
  EXPECT_MSG(stats.entries == (uint64_t)seeds, "%llu entries recorded", (unsigned long long)stats.entries);
  EXPECT_MSG(xpack_writer_finish(w, &err) == XPACK_OK, "%s", err.message);
  uint64_t problems = 0;
  if (seeds <= 16) {
    EXPECT(xpack_verify_file(path, NULL, NULL, &problems, &err) == XPACK_OK && problems == 0); /* sound */
  } else { /* sound too, but every tool that reads the whole file refuses it at open (core_identity_sharing) */
    EXPECT(xpack_verify_file(path, NULL, NULL, &problems, &err) == XPACK_ERR_UNSUPPORTED && problems == 1);
  }
}

int main(void) {
  if (xnn_initialize(NULL) != xnn_status_success) return 1;
  char dir[] = "/tmp/xpack-export-names-XXXXXX";
  EXPECT(mkdtemp(dir) != NULL);
  char cache[256], out[256];
  snprintf(cache, sizeof cache, "%s/c.xpc", dir);
  snprintf(out, sizeof out, "%s/c.xpwc", dir);
  xpack_error err;
  xpack_export_stats stats;
  struct stat st;

  write_cache(cache, 4, 1000); /* a few seeds, as families make: 8 KB of names for 2 KB of STRS */
  EXPECT_MSG(xpack_export_executorch(cache, out, NULL, NULL, &stats, &err) == XPACK_OK, "%s", err.message);
  unlink(out);

  /* A module path whose key is empty ("#xxh3-128:..."): ExecuTorch looks up no weight by "", so no record is
   * written for it (once, a record with an empty name was). */
  write_cache(cache, 2, 45);
  EXPECT_MSG(xpack_export_executorch(cache, out, NULL, NULL, &stats, &err) == XPACK_OK, "%s", err.message);
  EXPECT_MSG(stats.records == 0 && stats.skipped_not_executorch == 2, "empty key: %llu records, %llu not keys",
             (unsigned long long)stats.records, (unsigned long long)stats.skipped_not_executorch);
  unlink(out);

  write_cache(cache, 20000, 1000); /* 40 MB of names for 2 KB of STRS */
  EXPECT_MSG(xpack_export_executorch(cache, out, NULL, NULL, &stats, &err) == XPACK_ERR_UNSUPPORTED &&
                 strstr(err.message, "share their identity strings") && strstr(err.message, cache),
             "%s", err.message);
  EXPECT(stat(out, &st) != 0); /* nothing written */
  unlink(cache);
  rmdir(dir);
  return failures ? 1 : 0;
}
