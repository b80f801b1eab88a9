/* Checking a source file before converting it. docs/FORMAT.md section 9. */
#include <stdio.h>
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
