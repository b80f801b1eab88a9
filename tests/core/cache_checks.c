/* The shared check set (libpack/cachefile/cache_checks.h) and its callback contract: a small cache file is
 * written with cachefile's own writer, once sound and once with four planted faults, each in another check
 * (a misaligned region, an entry's check value, a provenance kind, an info string), every checksum sealed
    * over them. Then verify reports each of the four, in file order, and nothing on the sound file; a callback
    * that asks to stop gets the first fault only; compress refuses the faulty file naming that fault and
 * leaves no output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "cachefile/cache_checks.h"
#include "cachefile/cache_open.h"
#include "cachefile/cache_write.h"
#include "cachefile/region_place.h"
#include "common/le.h"
#include "expect.h"
#include "xpack.h"
#include "xpc_format.h"

#define PAGE 4096u
#define XNN_ALIGNMENT 64u
#define REGION_SIZE 128u /* a multiple of XNN_ALIGNMENT, as XNNPACK rounds */

static const char* const kStrings[] = {"kernel-0", "kernel-1", "fam", "model.pte", "key", "value"};
enum { S_KERNEL0, S_KERNEL1, S_FAMILY, S_INPUT, S_KEY, S_VALUE, S_COUNT };

/* Writes the test cache to path; with faults, the four planted faults. Returns 0 or -1. */
static int write_cache(const char* path, int faults) {
  uint8_t bytes[2][REGION_SIZE];
  for (unsigned i = 0; i < REGION_SIZE; i++) bytes[0][i] = (uint8_t)i, bytes[1][i] = (uint8_t)(3 * i + 1);
  uint64_t region_offset[2];
  region_offset[0] = xp_place_region(PAGE, REGION_SIZE, PAGE, XNN_ALIGNMENT);
  region_offset[1] = xp_place_region(region_offset[0] + REGION_SIZE, REGION_SIZE, PAGE, XNN_ALIGNMENT);
  const uint64_t data_end = region_offset[1] + REGION_SIZE;

  uint32_t string_offset[S_COUNT];
  uint64_t strings_size = 0;
  for (int i = 0; i < S_COUNT; i++) {
    string_offset[i] = (uint32_t)strings_size;
    strings_size += 4 + strlen(kStrings[i]) + 1;
  }
  xp_table_out tables[] = {
      {XPC_TAG_REGIONS, XPC_REGION_SIZE, 2, 0, NULL},     {XPC_TAG_ENTRIES, XPC_ENTRY_SIZE, 2, 0, NULL},
      {XPC_TAG_STRINGS, 1, strings_size, 0, NULL},        {XPC_TAG_PROVENANCE, XPC_PROVENANCE_SIZE, 1, 0, NULL},
      {XPC_TAG_BUILD_ID, 1, 4, 0, NULL},                  {XPC_TAG_INFO, XPC_INFO_SIZE, 1, 0, NULL},
      {XPC_TAG_FAMILIES, XPC_FAMILY_SIZE, 1, 0, NULL},
  };
  xp_metadata_out m;
  if (xp_metadata_begin(&m, tables, 7, data_end, path, NULL) != XPACK_OK) return -1;
  uint8_t* regions = xp_metadata_table(&m, XPC_TAG_REGIONS);
  for (int i = 0; i < 2; i++) {
    uint8_t* r = regions + i * XPC_REGION_SIZE;
    xp_put64(r + XPC_R_OFFSET, region_offset[i] + (faults && i == 1)); /* fault 1: misaligned */
    xp_put64(r + XPC_R_STORED_SIZE, REGION_SIZE);
    xp_put64(r + XPC_R_SIZE, REGION_SIZE);
    xp_put64(r + XPC_R_HASH, XXH3_64bits(bytes[i], REGION_SIZE));
  }
  uint8_t* strings = xp_metadata_table(&m, XPC_TAG_STRINGS);
  for (int i = 0; i < S_COUNT; i++) {
    xp_put32(strings + string_offset[i], (uint32_t)strlen(kStrings[i]));
    memcpy(strings + string_offset[i] + 4, kStrings[i], strlen(kStrings[i]));
  }
  uint64_t key_hash[2];
  for (int i = 0; i < 2; i++) key_hash[i] = xp_key_hash(7, kStrings[i], strlen(kStrings[i]), NULL, 0);
  const int first = key_hash[0] < key_hash[1] ? 0 : 1; /* entries ascend by key_hash */
  uint8_t* entries = xp_metadata_table(&m, XPC_TAG_ENTRIES);
  for (int k = 0; k < 2; k++) {
    const int i = k == 0 ? first : 1 - first;
    uint8_t* e = entries + k * XPC_ENTRY_SIZE;
    xp_put64(e + XPC_E_KEY_HASH, key_hash[i]);
    xp_put32(e + XPC_E_SEED, 7);
    xp_put32(e + XPC_E_KERNEL, string_offset[S_KERNEL0 + i]);
    xp_put32(e + XPC_E_BIAS, XPC_NONE);
    xp_put32(e + XPC_E_REGION, (uint32_t)i);
    xp_put32(e + XPC_E_FAMILY, 0);
    xp_put32(e + XPC_E_FLAGS, 0);
  }
  xp_metadata_put_entry_checks(&m);
  if (faults) xp_put64(entries + XPC_ENTRY_SIZE + XPC_E_CHECK, xp_le64(entries + XPC_ENTRY_SIZE + XPC_E_CHECK) ^ 1);
  uint8_t* provenance = xp_metadata_table(&m, XPC_TAG_PROVENANCE);
  xp_put32(provenance + XPC_P_NAME, string_offset[S_INPUT]);
  xp_put32(provenance + XPC_P_KIND, faults ? 99 : XPC_INPUT_PTE); /* fault 3 */
  memcpy(xp_metadata_table(&m, XPC_TAG_BUILD_ID), "test", 4);
  uint8_t* info = xp_metadata_table(&m, XPC_TAG_INFO);
  xp_put32(info + XPC_I_KEY, string_offset[S_KEY]);
  xp_put32(info + XPC_I_VALUE, faults ? 9999 : string_offset[S_VALUE]); /* fault 4 */
  xp_put32(xp_metadata_table(&m, XPC_TAG_FAMILIES) + XPC_M_NAME, string_offset[S_FAMILY]);
  xp_put64(xp_metadata_table(&m, XPC_TAG_FAMILIES) + XPC_M_PROBE_KEYS, 1); /* recorded, as a 1.3 writer does */
  xp_metadata_seal(&m, XPC_VERSION_MAJOR, XPC_VERSION_MINOR, 0);

  uint8_t header[XPC_HEADER_SIZE] = {0};
  const xp_header_fields fields = {XPC_VERSION_MAJOR, XPC_VERSION_MINOR, 0, PAGE, XNN_ALIGNMENT, 62, PAGE,
                                    data_end - PAGE};
  xp_header_put(header, &fields);
  uint8_t* file = calloc(1, (size_t)m.file_size);
  int rc = -1;
  FILE* f = fopen(path, "wb");
  if (file != NULL && f != NULL) {
    memcpy(file, header, sizeof header);
    for (int i = 0; i < 2; i++) memcpy(file + region_offset[i], bytes[i], REGION_SIZE);
    memcpy(file + m.metadata_offset, m.tail, m.tail_size);
    rc = fwrite(file, 1, (size_t)m.file_size, f) == m.file_size ? 0 : -1;
  }
  if (f != NULL && fclose(f) != 0) rc = -1;
  free(file);
  xp_metadata_free(&m);
  return rc;
}

typedef struct collected {
  char where[8][128];
  int count;
  int stop_after; /* 0: never stop */
} collected;

static int collect(void* context, const char* where, const char* what) {
  collected* c = context;
  if (c->count < 8) snprintf(c->where[c->count], sizeof c->where[0], "%s", where);
  c->count++;
  printf("  %s: %s\n", where, what);
  return c->stop_after != 0 && c->count >= c->stop_after;
}

static void verify_collect(void* context, const char* where, const char* what) { collect(context, where, what); }

static int starts_with(const char* s, const char* prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

int main(void) {
  char dir[] = "/tmp/cache_checks.XXXXXX";
  if (mkdtemp(dir) == NULL) return 1;
  char sound[64], faulty[64], out[64];
  snprintf(sound, sizeof sound, "%s/sound.xpc", dir);
  snprintf(faulty, sizeof faulty, "%s/faulty.xpc", dir);
  snprintf(out, sizeof out, "%s/out.xpc", dir);
  EXPECT(write_cache(sound, 0) == 0);
  EXPECT(write_cache(faulty, 1) == 0);

  printf("verify, sound file:\n");
  collected c = {{{0}}, 0, 0};
  uint64_t problems = 99;
  EXPECT(xpack_verify_file(sound, verify_collect, &c, &problems, NULL) == XPACK_OK);
  EXPECT(problems == 0 && c.count == 0);

  printf("verify, four planted faults:\n");
  memset(&c, 0, sizeof c);
  EXPECT(xpack_verify_file(faulty, verify_collect, &c, &problems, NULL) == XPACK_OK);
  EXPECT(problems == 4 && c.count == 4);
  EXPECT(starts_with(c.where[0], "region 1 at offset "));
  EXPECT(starts_with(c.where[1], "entry 1 at offset "));
  EXPECT(starts_with(c.where[2], "provenance record 0 at offset "));
  EXPECT(starts_with(c.where[3], "info record 0 at offset "));

  printf("the check set, stopping at the first problem:\n");
  xp_file file;
  EXPECT(xp_file_open(&file, faulty, 1, NULL) == XPACK_OK);
  collected first = {{{0}}, 0, 1};
  xp_checker checker;
  xp_checker_init(&checker, &file.view, collect, &first);
  xp_check_all(&checker);
  EXPECT(first.count == 1 && checker.problems == 1 && checker.stopped);
  EXPECT(starts_with(first.where[0], "region 1 at offset "));
  xpack_error err = {0};
  EXPECT(xp_check_first(&file.view, "faulty.xpc", &err) == XPACK_ERR_CORRUPT);
  EXPECT(starts_with(err.message, "faulty.xpc: region 1 at offset "));
  xp_file_close(&file);

  printf("compress refuses at the first problem:\n");
  memset(&err, 0, sizeof err);
  EXPECT(xpack_compress_file(sound, out, 1, NULL, NULL) == XPACK_OK);
  EXPECT(access(out, F_OK) == 0);
  unlink(out);
  EXPECT(xpack_compress_file(faulty, out, 1, NULL, &err) == XPACK_ERR_CORRUPT);
  printf("  %s\n", err.message);
  EXPECT(strstr(err.message, "faulty.xpc: region 1 at offset ") != NULL);
  EXPECT(strstr(err.message, "entry") == NULL); /* the first problem only */
  EXPECT(access(out, F_OK) != 0);

  unlink(sound);
  unlink(faulty);
  rmdir(dir);
  printf("%s\n", failures ? "FAILED"
                          : "cache checks: verify collects 4 of 4, the check set stops at 1, compress refuses");
  return failures != 0;
}
