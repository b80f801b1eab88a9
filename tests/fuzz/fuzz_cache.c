/* libFuzzer harness: arbitrary bytes as a cache file, through the parsing the loader and `xpack dump` /
 * `xpack verify` do: xpc_view_open (both the loader's form, allow_transport = 0, and the inspection
 * tools' form, 1), then every region, entry and string through the view accessors, the per-entry
 * check values, the small tables' string references, and look-ups (xpc_view_find) both of keys that
 * are in the file and of a few that are not. Nothing here may read outside [data, data + size).
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

#include "cache_view.h"
#include "le.h"
#include "xpc_format.h"

static volatile uint64_t g_sink;

/* Reads every byte of [p, p + n) so that ASan sees each access. */
static uint64_t touch(const uint8_t* p, uint64_t n) {
  uint64_t acc = 0;
  for (uint64_t i = 0; i < n; i++) acc = acc * 31 + p[i];
  return acc;
}

static uint64_t touch_string(const xpc_view* v, uint32_t offset) {
  const char* s;
  uint32_t len;
  if (xpc_view_string(v, offset, &s, &len) != 0) return 1;
  return touch((const uint8_t*)s, (uint64_t)len + 1); /* the string and its NUL */
}

/* The bytes a region occupies in the file: stored_size in the transport form, size otherwise. */
static uint64_t region_bytes(const xpc_view* v, const xpc_region* r) {
  return (v->flags & XPC_FLAG_TRANSPORT) ? r->stored_size : r->size;
}

static void lookups(const xpc_view* v) {
  static const char* kKernels[] = {"", "w", "xpack:xxh3-128:00000000000000000000000000000000:0",
                                   "79ecd561afb8dfd3b2e68da7b144ddea395854ffdd7632674ebf0d8da8a2b4c9"};
  static const uint32_t kSeeds[] = {0, 1, 0x12345678u, UINT32_MAX};
  xpc_entry e;
  xpc_region r;
  uint64_t index = 0;
  for (size_t k = 0; k < sizeof kKernels / sizeof kKernels[0]; k++) {
    for (size_t s = 0; s < sizeof kSeeds / sizeof kSeeds[0]; s++) {
      const char* kernel = kKernels[k];
      xpc_find_result fr = xpc_view_find(v, kSeeds[s], kernel, strlen(kernel), NULL, 0, &e, &r, &index);
      if (fr == XPC_FOUND) g_sink += touch(v->base + r.offset, region_bytes(v, &r)) + index;
      fr = xpc_view_find(v, kSeeds[s], kernel, strlen(kernel), "b", 1, &e, &r, NULL);
      if (fr == XPC_FOUND) g_sink += touch(v->base + r.offset, region_bytes(v, &r));
    }
  }
}

static void walk(const xpc_view* v) {
  /* Regions: the records, and the bytes of every sound one (as verify hashes them). */
  for (uint64_t i = 0; i < v->regions.count; i++) {
    xpc_region r;
    xpc_view_region(v, i, &r);
    if (xpc_region_is_sound(v, &r)) g_sink += touch(v->base + r.offset, region_bytes(v, &r));
  }
  /* Entries: strings, key hash, check value, and a look-up of each entry's own key (as the loader does
   * for every weight XNNPACK asks for); a found entry's region is read in full. */
  for (uint64_t i = 0; i < v->entries.count; i++) {
    xpc_entry e;
    xpc_view_entry(v, i, &e);
    const char *kernel = NULL, *bias = NULL;
    uint32_t kernel_len = 0, bias_len = 0;
    int strings_ok = xpc_view_string(v, e.kernel, &kernel, &kernel_len) == 0;
    if (e.bias != XPC_NONE) strings_ok = strings_ok && xpc_view_string(v, e.bias, &bias, &bias_len) == 0;
    g_sink += touch_string(v, e.kernel) + (e.bias != XPC_NONE ? touch_string(v, e.bias) : 0);
    if (e.region < v->regions.count) {
      xpc_region r;
      xpc_view_region(v, e.region, &r);
      g_sink += xpc_entry_check(v, i, &r) + (uint64_t)xpc_region_is_sound(v, &r);
    }
    if (strings_ok) {
      g_sink += xpc_key_hash(e.seed, kernel, kernel_len, bias, bias_len);
      xpc_entry found;
      xpc_region region;
      uint64_t index = 0;
      if (xpc_view_find(v, e.seed, kernel, kernel_len, bias, bias_len, &found, &region, &index) == XPC_FOUND) {
        g_sink += touch(v->base + region.offset, region_bytes(v, &region)) + index;
      }
    }
  }
  /* Every string of STRS, walking NUL to NUL. */
  uint64_t offset = 0;
  while (offset < v->strings.count && offset <= UINT32_MAX) {
    const char* s;
    uint32_t len;
    if (xpc_view_string(v, (uint32_t)offset, &s, &len) != 0) break;
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

/* ---- checksum repair (best effort: anything out of bounds is left alone) ---- */

static int in_file(uint64_t offset, uint64_t n, uint64_t size) { return offset <= size && n <= size - offset; }

/* A NUL-terminated string at `offset` of a byte table [t, t + count). */
static int table_string(const uint8_t* t, uint64_t count, uint32_t offset, const char** s, size_t* len) {
  if (offset >= count) return -1;
  const uint8_t* nul = memchr(t + offset, 0, (size_t)(count - offset));
  if (nul == NULL) return -1;
  *s = (const char*)(t + offset);
  *len = (size_t)(nul - (t + offset));
  return 0;
}

static void repair(uint8_t* b, uint64_t size) {
  if (size >= XPC_HEADER_SIZE) xp_put64(b + XPC_H_CHECKSUM, XXH3_64bits(b, XPC_H_CHECKSUM));
  if (size < XPC_HEADER_SIZE + XPC_FOOTER_SIZE) return;
  uint8_t* f = b + size - XPC_FOOTER_SIZE;
  uint64_t dir = xp_le64(f + XPC_F_DIR_OFFSET), dir_count = xp_le32(f + XPC_F_DIR_COUNT);
  if (dir_count <= 64 && in_file(dir, dir_count * XPC_DIR_ENTRY_SIZE, size)) {
    uint8_t *regn = NULL, *entr = NULL, *strs = NULL;
    uint64_t regn_count = 0, entr_count = 0, strs_count = 0;
    uint32_t regn_stride = 0, entr_stride = 0;
    for (uint64_t i = 0; i < dir_count; i++) {
      const uint8_t* d = b + dir + i * XPC_DIR_ENTRY_SIZE;
      uint32_t tag = xp_le32(d + XPC_D_TAG), stride = xp_le32(d + XPC_D_RECORD_SIZE);
      uint64_t off = xp_le64(d + XPC_D_OFFSET), count = xp_le64(d + XPC_D_COUNT);
      if (stride == 0 || count > size / stride || !in_file(off, count * stride, size)) continue;
      if (tag == XPC_TAG_REGIONS && stride >= XPC_REGION_SIZE) regn = b + off, regn_count = count, regn_stride = stride;
      if (tag == XPC_TAG_ENTRIES && stride >= XPC_ENTRY_SIZE) entr = b + off, entr_count = count, entr_stride = stride;
      if (tag == XPC_TAG_STRINGS && stride == 1) strs = b + off, strs_count = count;
    }
    for (uint64_t i = 0; entr && i < entr_count; i++) {
      uint8_t* e = entr + i * entr_stride;
      const char *kernel, *bias = NULL;
      size_t kernel_len, bias_len = 0;
      uint32_t bias_offset = xp_le32(e + XPC_E_BIAS);
      if (strs && table_string(strs, strs_count, xp_le32(e + XPC_E_KERNEL), &kernel, &kernel_len) == 0 &&
          (bias_offset == XPC_NONE || table_string(strs, strs_count, bias_offset, &bias, &bias_len) == 0)) {
        xp_put64(e + XPC_E_KEY_HASH, xpc_key_hash(xp_le32(e + XPC_E_SEED), kernel, kernel_len, bias, bias_len));
      }
      uint32_t region = xp_le32(e + XPC_E_REGION);
      if (regn && region < regn_count) {
        uint8_t buf[XPC_E_CHECK + XPC_REGION_SIZE];
        memcpy(buf, e, XPC_E_CHECK);
        memcpy(buf + XPC_E_CHECK, regn + (uint64_t)region * regn_stride, XPC_REGION_SIZE);
        xp_put64(e + XPC_E_CHECK, XXH3_64bits(buf, sizeof buf));
      }
    }
    for (uint64_t i = 0; i < dir_count; i++) {
      uint8_t* d = b + dir + i * XPC_DIR_ENTRY_SIZE;
      uint32_t stride = xp_le32(d + XPC_D_RECORD_SIZE);
      uint64_t off = xp_le64(d + XPC_D_OFFSET), count = xp_le64(d + XPC_D_COUNT);
      if (stride == 0 || count > size / stride || !in_file(off, count * stride, size)) continue;
      xp_put64(d + XPC_D_HASH, XXH3_64bits(b + off, (size_t)(count * stride)));
    }
    xp_put64(f + XPC_F_DIR_HASH, XXH3_64bits(b + dir, (size_t)(dir_count * XPC_DIR_ENTRY_SIZE)));
  }
  uint64_t meta = xp_le64(f + XPC_F_METADATA_OFFSET), meta_size = xp_le64(f + XPC_F_METADATA_SIZE);
  if (in_file(meta, meta_size, size)) xp_put64(f + XPC_F_METADATA_HASH, XXH3_64bits(b + meta, (size_t)meta_size));
  xp_put64(f + XPC_F_CHECKSUM, XXH3_64bits(f, XPC_F_CHECKSUM));
}

static void open_and_walk(const uint8_t* base, size_t size) {
  for (int allow_transport = 0; allow_transport < 2; allow_transport++) {
    xpc_view v;
    xpack_error err;
    if (xpc_view_open(&v, base, size, "fuzz.xpc", allow_transport, &err) != XPACK_OK) continue;
    walk(&v);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  /* libFuzzer's buffer is a heap block of exactly `size` bytes, so ASan reports any read past the end.
   * An empty input gets a valid pointer, as the loader and verify pass for an empty file. */
  static uint8_t empty[1];
  open_and_walk(size ? data : empty, size);
  uint8_t* copy = malloc(size ? size : 1);
  if (copy == NULL) return 0;
  memcpy(copy, data, size);
  repair(copy, size);
  if (size == 0 || memcmp(copy, data, size) != 0) open_and_walk(copy, size);
  free(copy);
  return 0;
}
