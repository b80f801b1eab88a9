/* Checksum repair for the cache fuzzers: see cache_repair.h. */
#include "cache_repair.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cachefile/cache_view.h"
#include "common/le.h"
#include "xpc_format.h"

static int in_file(uint64_t offset, uint64_t n, uint64_t size) { return offset <= size && n <= size - offset; }

/* The string at `offset` of the STRS table [t, t + count) as FORMAT.md 5.4 lays it out: u32 length L, L bytes,
 * one zero byte, all inside the table. (Read once as a NUL-terminated string at the offset: every repaired
 * entry then got a wrong key hash, and the fuzzers never reached the paths of an entry found.) */
static int table_string(const uint8_t* t, uint64_t count, uint32_t offset, const char** s, size_t* len) {
  if ((uint64_t)offset + 4 > count) return -1;
  const uint64_t n = xp_le32(t + offset);
  if (n + 5 > count - offset || t[offset + 4 + n] != 0) return -1;
  *s = (const char*)(t + offset + 4);
  *len = (size_t)n;
  return 0;
}

void xp_fuzz_repair(uint8_t* b, uint64_t size) {
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
        xp_put64(e + XPC_E_KEY_HASH, xp_key_hash(xp_le32(e + XPC_E_SEED), kernel, kernel_len, bias, bias_len));
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

void xp_fuzz_as_given_and_repaired(const uint8_t* data, size_t size, void (*fn)(const uint8_t* bytes, size_t size)) {
  /* libFuzzer's buffer is a heap block of exactly `size` bytes, so ASan reports any read past the end. An empty
   * input gets a valid pointer, as the loader and verify pass for an empty file. */
  static uint8_t empty[1];
  fn(size ? data : empty, size);
  if (size == 0) return;
  uint8_t* copy = malloc(size);
  if (copy == NULL) return;
  memcpy(copy, data, size);
  xp_fuzz_repair(copy, size);
  if (memcmp(copy, data, size) != 0) fn(copy, size);
  free(copy);
}
