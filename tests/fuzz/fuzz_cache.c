/* libFuzzer harness: arbitrary bytes as a cache file, through the parsing the loader and `xpack dump` /
 * `xpack verify` do: xp_view_open (both the loader's form, allow_transport = 0, and the inspection
 * tools' form, 1), then every region, entry and string through the view accessors, the per-entry
 * check values, the small tables' string references, and look-ups (xp_view_find) both of keys that
 * are in the file and of a few that are not; then every check `xpack verify` makes (xp_check_all, every
 * problem reported, never stopping: the checker's own messages are formatted from the file's fields, once
 * with a tag "%s%s" that crashed it), with each soundly placed region's bytes read as verify hashes them.
 * Nothing here may read outside [data, data + size).
 *
 * Each input runs twice: as given, and "repaired": a copy whose checksums (header, footer, directory,
 * metadata area, every table's hash, every entry's key hash and check value) are recomputed for
 * whatever structure the bytes describe. Without the repair almost every mutation dies at the first
 * checksum and the code behind it (bounds of tables, records, strings, look-ups) is never reached. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cache_repair.h"
#include "cachefile/cache_checks.h"
#include "cachefile/cache_view.h"
#include "common/le.h"
#include "xpc_format.h"

static volatile uint64_t g_sink;

/* Reads every byte of [p, p + n) so that ASan sees each access. */
static uint64_t touch(const uint8_t* p, uint64_t n) {
  uint64_t acc = 0;
  for (uint64_t i = 0; i < n; i++) acc = acc * 31 + p[i];
  return acc;
}

static uint64_t touch_string(const xp_view* v, uint32_t offset) {
  const char* s;
  uint32_t len;
  if (xp_view_string(v, offset, &s, &len) != 0) return 1;
  return touch((const uint8_t*)s, (uint64_t)len + 1); /* the string and its NUL */
}

/* The bytes a region occupies in the file: stored_size in the transport form, size otherwise. */
static uint64_t region_bytes(const xp_view* v, const xp_region* r) {
  return (v->flags & XPC_FLAG_TRANSPORT) ? r->stored_size : r->size;
}

static void lookups(const xp_view* v) {
  static const char* kKernels[] = {"", "w", "xpack:xxh3-128:00000000000000000000000000000000:0",
                                   "79ecd561afb8dfd3b2e68da7b144ddea395854ffdd7632674ebf0d8da8a2b4c9"};
  static const uint32_t kSeeds[] = {0, 1, 0x12345678u, UINT32_MAX};
  xp_entry e;
  xp_region r;
  uint64_t index = 0;
  for (size_t k = 0; k < sizeof kKernels / sizeof kKernels[0]; k++) {
    for (size_t s = 0; s < sizeof kSeeds / sizeof kSeeds[0]; s++) {
      const char* kernel = kKernels[k];
      xp_find_result fr = xp_view_find(v, kSeeds[s], kernel, strlen(kernel), NULL, 0, &e, &r, &index);
      if (fr == XPC_FOUND) g_sink += touch(v->base + r.offset, region_bytes(v, &r)) + index;
      fr = xp_view_find(v, kSeeds[s], kernel, strlen(kernel), "b", 1, &e, &r, NULL);
      if (fr == XPC_FOUND) g_sink += touch(v->base + r.offset, region_bytes(v, &r));
    }
  }
}

static void walk(const xp_view* v) {
  /* Regions: the records, and the bytes of every sound one (as verify hashes them). */
  for (uint64_t i = 0; i < v->regions.count; i++) {
    xp_region r;
    xp_view_region(v, i, &r);
    if (xp_region_is_sound(v, &r)) g_sink += touch(v->base + r.offset, region_bytes(v, &r));
  }
  /* Entries: strings, key hash, check value, and a look-up of each entry's own key (as the loader does
   * for every weight XNNPACK asks for); a found entry's region is read in full. */
  for (uint64_t i = 0; i < v->entries.count; i++) {
    xp_entry e;
    xp_view_entry(v, i, &e);
    const char *kernel = NULL, *bias = NULL;
    uint32_t kernel_len = 0, bias_len = 0;
    int strings_ok = xp_view_string(v, e.kernel, &kernel, &kernel_len) == 0;
    if (e.bias != XPC_NONE) strings_ok = strings_ok && xp_view_string(v, e.bias, &bias, &bias_len) == 0;
    g_sink += touch_string(v, e.kernel) + (e.bias != XPC_NONE ? touch_string(v, e.bias) : 0);
    if (e.region < v->regions.count) {
      xp_region r;
      xp_view_region(v, e.region, &r);
      g_sink += xp_entry_check(v, i, &r) + (uint64_t)xp_region_is_sound(v, &r);
    }
    if (strings_ok) {
      g_sink += xp_key_hash(e.seed, kernel, kernel_len, bias, bias_len);
      xp_entry found;
      xp_region region;
      uint64_t index = 0;
      if (xp_view_find(v, e.seed, kernel, kernel_len, bias, bias_len, &found, &region, &index) == XPC_FOUND) {
        g_sink += touch(v->base + region.offset, region_bytes(v, &region)) + index;
      }
    }
  }
  /* Every string of STRS, walking NUL to NUL. */
  uint64_t offset = 0;
  while (offset < v->strings.count && offset <= UINT32_MAX) {
    const char* s;
    uint32_t len;
    if (xp_view_string(v, (uint32_t)offset, &s, &len) != 0) break;
    g_sink += touch((const uint8_t*)s, (uint64_t)len + 1);
    offset += (uint64_t)len + 1;
  }
  /* The small tables, read as libpack/src/inspect.c and verify.c read them. */
  for (uint64_t i = 0; i < v->provenance.count; i++) {
    const uint8_t* p = v->base + v->provenance.offset + i * v->provenance.record_size;
    g_sink += touch_string(v, xp_le32(p + XPC_P_NAME)) + xp_le32(p + XPC_P_KIND) + xp_le64(p + XPC_P_FILE_SIZE) +
              xp_le64(p + XPC_P_FILE_HASH) + xp_le64(p + XPC_P_PROGRAM_SIZE) + xp_le64(p + XPC_P_PROGRAM_HASH);
  }
  for (uint64_t i = 0; i < v->info.count; i++) {
    const uint8_t* p = v->base + v->info.offset + i * v->info.record_size;
    g_sink += touch_string(v, xp_le32(p + XPC_I_KEY)) + touch_string(v, xp_le32(p + XPC_I_VALUE));
  }
  for (uint64_t i = 0; i < v->families.count; i++) {
    const uint8_t* p = v->base + v->families.offset + i * v->families.record_size;
    g_sink += touch_string(v, xp_le32(p + XPC_M_NAME)) + xp_le64(p + XPC_M_PROBE_HASH);
  }
  g_sink += touch(v->base + v->build_id.offset, v->build_id.count);
  g_sink += touch(v->base + v->metadata_offset, v->metadata_size);
  lookups(v);
}

/* Every problem, as verify lists them: its texts are read in full (a bad format would show here). */
static int count_problem(void* context, const char* where, const char* what) {
  (void)context;
  g_sink += touch((const uint8_t*)where, strlen(where)) + touch((const uint8_t*)what, strlen(what));
  return 0;
}

static void region_bytes_read(void* context, xp_checker* c, uint64_t index, const xp_region* r, const char* where) {
  (void)context;
  (void)where;
  g_sink += touch(c->v->base + r->offset, region_bytes(c->v, r)) + index;
}

static void open_and_walk(const uint8_t* base, size_t size) {
  for (int allow_transport = 0; allow_transport < 2; allow_transport++) {
    xp_view v;
    xpack_error err;
    if (xp_view_open(&v, base, size, "fuzz.xpc", allow_transport, &err) != XPACK_OK) continue;
    walk(&v);
    if (allow_transport) {
      xp_checker checker;
      xp_checker_init(&checker, &v, count_problem, NULL);
      xp_check_tables(&checker);
      xp_check_regions(&checker, region_bytes_read, NULL);
      xp_check_entries(&checker);
      xp_check_small_tables(&checker);
      g_sink += checker.problems;
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  xp_fuzz_as_given_and_repaired(data, size, open_and_walk);
  return 0;
}
