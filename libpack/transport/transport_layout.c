/* Checking a source file before converting it, and rebuilding its header, tables and footer for a new
 * placement of its regions. Compress and inflate move regions and change their stored sizes; everything
 * that depends on that (REGN offset and stored_size, ENTR check values, table offsets, every checksum) is
 * recomputed here, and every other byte of the metadata is copied. docs/FORMAT.md section 9. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/error.h"
#include "common/le.h"
#include "transport/transport.h"
#include "xpc_format.h"

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }

/* a + b <= limit without overflow */
static int fits(uint64_t a, uint64_t b, uint64_t limit) { return a <= limit && b <= limit - a; }

static void tag_text(uint32_t tag, char out[5]) {
  for (int i = 0; i < 4; i++) {
    unsigned char c = (unsigned char)(tag >> (8 * i));
    out[i] = (c >= 32 && c < 127) ? (char)c : '?';
  }
  out[4] = 0;
}

static const uint8_t* directory_entry(const xpc_view* v, uint32_t i) {
  return v->base + v->dir_offset + (uint64_t)i * XPC_DIR_ENTRY_SIZE;
}

static xpack_status check_tables(const xpc_view* v, const char* name, xpack_error* err) {
  if (XXH3_64bits(v->base + v->metadata_offset, (size_t)v->metadata_size) != v->metadata_hash) {
    return xpack_fail(err, XPACK_ERR_CORRUPT, "%s: metadata area at offset %llu fails its checksum", name,
                      (unsigned long long)v->metadata_offset);
  }
  for (uint32_t i = 0; i < v->dir_count; i++) {
    const uint8_t* d = directory_entry(v, i);
    uint64_t offset = xp_le64(d + XPC_D_OFFSET);
    uint64_t bytes = xp_le64(d + XPC_D_COUNT) * xp_le32(d + XPC_D_RECORD_SIZE); /* bounded by xpc_view_open */
    if (XXH3_64bits(v->base + offset, (size_t)bytes) != xp_le64(d + XPC_D_HASH)) {
      char tag[5];
      tag_text(xp_le32(d + XPC_D_TAG), tag);
      return xpack_fail(err, XPACK_ERR_CORRUPT, "%s: table %s at offset %llu fails its checksum", name, tag,
                        (unsigned long long)offset);
    }
  }
  return XPACK_OK;
}

static xpack_status check_regions(const xpc_view* v, const char* name, xpack_error* err) {
  const int transport = (v->flags & XPC_FLAG_TRANSPORT) != 0;
  const uint64_t data_end = v->data_offset + v->data_size;
  if (transport && v->data_offset != XPC_HEADER_SIZE) {
    return xpack_fail(err, XPACK_ERR_CORRUPT, "%s: header: data_offset is %llu, the transport form has %d", name,
                      (unsigned long long)v->data_offset, XPC_HEADER_SIZE);
  }
  uint64_t cursor = v->data_offset;
  for (uint64_t i = 0; i < v->regions.count; i++) {
    xpc_region r;
    xpc_view_region(v, i, &r);
    if (transport) {
      if (r.offset != cursor) {
        return xpack_fail(err, XPACK_ERR_CORRUPT,
                          "%s: region %llu at offset %llu: expected at offset %llu, right after the previous frame",
                          name, (unsigned long long)i, (unsigned long long)r.offset, (unsigned long long)cursor);
      }
      if (r.size == 0 || r.stored_size == 0 || !fits(r.offset, r.stored_size, data_end)) {
        return xpack_fail(err, XPACK_ERR_CORRUPT,
                          "%s: region %llu at offset %llu: size %llu, frame of %llu bytes: must be non-empty and end "
                          "inside the data area (at %llu)",
                          name, (unsigned long long)i, (unsigned long long)r.offset, (unsigned long long)r.size,
                          (unsigned long long)r.stored_size, (unsigned long long)data_end);
      }
      cursor = r.offset + r.stored_size;
    } else {
      if (!xpc_region_is_sound(v, &r) || r.offset < cursor) {
        return xpack_fail(err, XPACK_ERR_CORRUPT,
                          "%s: region %llu at offset %llu (size %llu, stored %llu) lies outside the data area, is "
                          "misaligned or overlaps the previous region",
                          name, (unsigned long long)i, (unsigned long long)r.offset, (unsigned long long)r.size,
                          (unsigned long long)r.stored_size);
      }
      cursor = r.offset + r.size;
    }
  }
  if (transport && (cursor != data_end || v->metadata_offset != align_up(data_end, 8))) {
    return xpack_fail(err, XPACK_ERR_CORRUPT,
                      "%s: the frames end at %llu; the data area ends at %llu and the metadata starts at %llu "
                      "(expected the next multiple of 8)",
                      name, (unsigned long long)cursor, (unsigned long long)data_end,
                      (unsigned long long)v->metadata_offset);
  }
  return XPACK_OK;
}

static xpack_status check_entries(const xpc_view* v, const char* name, xpack_error* err) {
  for (uint64_t i = 0; i < v->entries.count; i++) {
    xpc_entry e;
    xpc_view_entry(v, i, &e);
    uint64_t at = v->entries.offset + i * v->entries.record_size;
    if (e.region >= v->regions.count) {
      return xpack_fail(err, XPACK_ERR_CORRUPT, "%s: entry %llu at offset %llu: region index %u, the file has %llu",
                        name, (unsigned long long)i, (unsigned long long)at, e.region,
                        (unsigned long long)v->regions.count);
    }
    xpc_region r;
    xpc_view_region(v, e.region, &r);
    if (xpc_entry_check(v, i, &r) != e.check) {
      return xpack_fail(err, XPACK_ERR_CORRUPT,
                        "%s: entry %llu at offset %llu: check value does not match the entry and region %u", name,
                        (unsigned long long)i, (unsigned long long)at, e.region);
    }
  }
  return XPACK_OK;
}

xpack_status xt_check_source(const xpc_view* v, const char* name, xpack_error* err) {
  xpack_status st = check_tables(v, name, err);
  if (st == XPACK_OK) st = check_regions(v, name, err);
  if (st == XPACK_OK) st = check_entries(v, name, err);
  return st;
}

xpack_status xt_mappable_offsets(const xpc_view* v, const char* name, uint64_t* offsets, uint64_t* data_end,
                                 xpack_error* err) {
  const uint64_t small_alignment = v->xnn_alignment > XPC_MIN_REGION_ALIGNMENT ? v->xnn_alignment
                                                                                : XPC_MIN_REGION_ALIGNMENT;
  const uint64_t limit = (uint64_t)INT64_MAX / 2; /* leaves room for the metadata; off_t must hold it all */
  uint64_t cursor = v->page_alignment;
  for (uint64_t i = 0; i < v->regions.count; i++) {
    xpc_region r;
    xpc_view_region(v, i, &r);
    uint64_t alignment = r.size >= v->page_alignment ? v->page_alignment : small_alignment;
    uint64_t offset = align_up(cursor, alignment);
    if (r.size > limit || !fits(offset, r.size, limit)) {
      return xpack_fail(err, XPACK_ERR_CORRUPT, "%s: region %llu at offset %llu: size %llu does not fit a file", name,
                        (unsigned long long)i, (unsigned long long)r.offset, (unsigned long long)r.size);
    }
    offsets[i] = offset;
    cursor = offset + r.size;
  }
  *data_end = cursor;
  return XPACK_OK;
}

static void put_footer(uint8_t* f, const xpc_view* v, uint64_t metadata_offset, uint64_t metadata_size,
                       uint64_t dir_offset, uint64_t file_size, const uint8_t* metadata, const uint8_t* dir,
                       uint32_t flags) {
  xp_put64(f + XPC_F_METADATA_OFFSET, metadata_offset);
  xp_put64(f + XPC_F_METADATA_SIZE, metadata_size);
  xp_put64(f + XPC_F_DIR_OFFSET, dir_offset);
  xp_put32(f + XPC_F_DIR_COUNT, v->dir_count);
  xp_put32(f + XPC_F_FOOTER_SIZE, XPC_FOOTER_SIZE);
  xp_put64(f + XPC_F_FILE_SIZE, file_size);
  xp_put64(f + XPC_F_METADATA_HASH, XXH3_64bits(metadata, (size_t)metadata_size));
  xp_put64(f + XPC_F_DIR_HASH, XXH3_64bits(dir, (size_t)v->dir_count * XPC_DIR_ENTRY_SIZE));
  xp_put16(f + XPC_F_MAJOR, v->major);
  xp_put16(f + XPC_F_MINOR, v->minor);
  xp_put32(f + XPC_F_FLAGS, flags);
  xp_put64(f + XPC_F_CHECKSUM, XXH3_64bits(f, XPC_F_CHECKSUM));
  memcpy(f + XPC_F_MAGIC, XPC_FOOTER_MAGIC, XPC_FOOTER_MAGIC_SIZE);
}

xpack_status xt_build_layout(const xpc_view* v, const char* name, const uint64_t* offsets, const uint64_t* stored,
                             uint64_t data_offset, uint64_t data_end, uint32_t flags, xt_layout* out,
                             xpack_error* err) {
  memset(out, 0, sizeof *out);
  /* Tables in directory order, each at the next multiple of 8, then the directory (section 5). */
  uint64_t* table_offset = malloc(((size_t)v->dir_count + 1) * sizeof *table_offset);
  if (table_offset == NULL) return xpack_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", name);
  const uint64_t metadata_offset = align_up(data_end, 8);
  uint64_t cursor = metadata_offset;
  for (uint32_t i = 0; i < v->dir_count; i++) {
    const uint8_t* d = directory_entry(v, i);
    table_offset[i] = cursor;
    cursor = align_up(cursor + xp_le64(d + XPC_D_COUNT) * xp_le32(d + XPC_D_RECORD_SIZE), 8);
  }
  const uint64_t dir_offset = cursor;
  const uint64_t metadata_size = dir_offset + (uint64_t)v->dir_count * XPC_DIR_ENTRY_SIZE - metadata_offset;
  uint8_t* tail = calloc((size_t)metadata_size + XPC_FOOTER_SIZE, 1);
  if (tail == NULL) {
    free(table_offset);
    return xpack_fail(err, XPACK_ERR_NOMEM, "%s: out of memory for %llu bytes of metadata", name,
                      (unsigned long long)metadata_size);
  }
  uint8_t* regions = NULL;
  uint8_t* entries = NULL;
  for (uint32_t i = 0; i < v->dir_count; i++) {
    const uint8_t* d = directory_entry(v, i);
    uint8_t* table = tail + (table_offset[i] - metadata_offset);
    uint64_t bytes = xp_le64(d + XPC_D_COUNT) * xp_le32(d + XPC_D_RECORD_SIZE);
    memcpy(table, v->base + xp_le64(d + XPC_D_OFFSET), (size_t)bytes);
    if (xp_le32(d + XPC_D_TAG) == XPC_TAG_REGIONS) regions = table;
    if (xp_le32(d + XPC_D_TAG) == XPC_TAG_ENTRIES) entries = table;
  }
  for (uint64_t i = 0; i < v->regions.count; i++) {
    uint8_t* r = regions + i * v->regions.record_size;
    xp_put64(r + XPC_R_OFFSET, offsets[i]);
    xp_put64(r + XPC_R_STORED_SIZE, stored[i]);
  }
  for (uint64_t i = 0; i < v->entries.count; i++) {
    uint8_t* e = entries + i * v->entries.record_size;
    uint8_t check[XPC_E_CHECK + XPC_REGION_SIZE];
    memcpy(check, e, XPC_E_CHECK);
    memcpy(check + XPC_E_CHECK, regions + (uint64_t)xp_le32(e + XPC_E_REGION) * v->regions.record_size,
           XPC_REGION_SIZE);
    xp_put64(e + XPC_E_CHECK, XXH3_64bits(check, sizeof check));
  }
  uint8_t* dir = tail + (dir_offset - metadata_offset);
  for (uint32_t i = 0; i < v->dir_count; i++) {
    const uint8_t* d = directory_entry(v, i);
    uint8_t* nd = dir + (uint64_t)i * XPC_DIR_ENTRY_SIZE;
    uint64_t bytes = xp_le64(d + XPC_D_COUNT) * xp_le32(d + XPC_D_RECORD_SIZE);
    memcpy(nd, d, XPC_DIR_ENTRY_SIZE);
    xp_put64(nd + XPC_D_OFFSET, table_offset[i]);
    xp_put64(nd + XPC_D_HASH, XXH3_64bits(tail + (table_offset[i] - metadata_offset), (size_t)bytes));
  }
  free(table_offset);
  const uint64_t file_size = metadata_offset + metadata_size + XPC_FOOTER_SIZE;
  put_footer(tail + metadata_size, v, metadata_offset, metadata_size, dir_offset, file_size, tail, dir, flags);

  memcpy(out->header, v->base, XPC_HEADER_SIZE);
  xp_put32(out->header + XPC_H_FLAGS, flags);
  xp_put64(out->header + XPC_H_DATA_OFFSET, data_offset);
  xp_put64(out->header + XPC_H_DATA_SIZE, data_end - data_offset);
  xp_put64(out->header + XPC_H_CHECKSUM, XXH3_64bits(out->header, XPC_H_CHECKSUM));
  out->tail = tail;
  out->tail_size = (size_t)metadata_size + XPC_FOOTER_SIZE;
  out->metadata_offset = metadata_offset;
  out->file_size = file_size;
  return XPACK_OK;
}
