/* The checked view of a cache file: see cache_view.h. */
#define _GNU_SOURCE /* memmem */
#include "cachefile/cache_view.h"

#include <stdio.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "cachefile/region_place.h"
#include "common/error.h"
#include "common/le.h"
#include "xpc_format.h"


typedef struct table_spec {
  uint32_t tag;
  uint32_t min_record_size;
  int required;
  int hash_at_open; /* small tables are hashed at open; REGN, ENTR, STRS are checked per use */
  int byte_table;   /* offsets into it count bytes: its record size is 1 in every 1.x file */
  size_t field;     /* offsetof the xp_table in xp_view */
} table_spec;

static const table_spec kTables[] = {
    {XPC_TAG_REGIONS, XPC_REGION_SIZE, 1, 0, 0, offsetof(xp_view, regions)},
    {XPC_TAG_ENTRIES, XPC_ENTRY_SIZE, 1, 0, 0, offsetof(xp_view, entries)},
    {XPC_TAG_STRINGS, 1, 1, 0, 1, offsetof(xp_view, strings)},
    {XPC_TAG_PROVENANCE, XPC_PROVENANCE_SIZE, 1, 1, 0, offsetof(xp_view, provenance)},
    {XPC_TAG_BUILD_ID, 1, 1, 1, 1, offsetof(xp_view, build_id)},
    {XPC_TAG_INFO, XPC_INFO_SIZE, 1, 1, 0, offsetof(xp_view, info)},
    {XPC_TAG_FAMILIES, XPC_FAMILY_SIZE, 1, 1, 0, offsetof(xp_view, families)},
};

size_t xp_known_tables(uint32_t tag[], uint32_t record_size[], size_t capacity) {
  const size_t n = sizeof kTables / sizeof kTables[0];
  for (size_t k = 0; k < n && k < capacity; k++) {
    tag[k] = kTables[k].tag;
    record_size[k] = kTables[k].min_record_size;
  }
  return n;
}

void xp_tag_text(uint32_t tag, char out[5]) {
  for (int i = 0; i < 4; i++) {
    unsigned char c = (unsigned char)(tag >> (8 * i));
    out[i] = (c >= 32 && c < 127) ? (char)c : '?';
  }
  out[4] = 0;
}

/* How far past the data area a footer is looked for, when the file's last bytes are not one: the metadata area
 * of the largest caches is a few MiB, and the search runs on a refusal only. */
#define XP_FOOTER_SEARCH_BYTES (64u << 20)

/* The end of the first sound footer (magic, checksum, and a file_size naming its own end) in [from, v->size), or 0:
 * the size a file that gained bytes should have. */
static uint64_t find_sound_footer_end(const xp_view* v, uint64_t from) {
  const uint64_t until = v->size - from > XP_FOOTER_SEARCH_BYTES ? from + XP_FOOTER_SEARCH_BYTES : v->size;
  for (uint64_t at = from; until - at >= XPC_FOOTER_SIZE;) {
    const uint8_t* magic = memmem(v->base + at + XPC_F_MAGIC, (size_t)(until - at - XPC_F_MAGIC), XPC_FOOTER_MAGIC,
                                  XPC_FOOTER_MAGIC_SIZE);
    if (magic == NULL) return 0;
    const uint8_t* f = magic - XPC_F_MAGIC;
    const uint64_t end = (uint64_t)(f - v->base) + XPC_FOOTER_SIZE;
    if (xp_le64(f + XPC_F_FILE_SIZE) == end && XXH3_64bits(f, XPC_F_CHECKSUM) == xp_le64(f + XPC_F_CHECKSUM)) return end;
    at = (uint64_t)(f - v->base) + 1;
  }
  return 0;
}

static xpack_status open_footer(xp_view* v, const char* name, xpack_error* err) {
  const uint8_t* f = v->base + v->size - XPC_FOOTER_SIZE;
  if (memcmp(f + XPC_F_MAGIC, XPC_FOOTER_MAGIC, XPC_FOOTER_MAGIC_SIZE) != 0) {
    if (memcmp(v->base, XPC_HEADER_MAGIC, XPC_HEADER_MAGIC_SIZE) == 0) {
      /* A sound header knows where the data area ends: a file shorter than that plus a footer was cut. */
      const uint64_t data_end = xp_le64(v->base + XPC_H_DATA_OFFSET) + xp_le64(v->base + XPC_H_DATA_SIZE);
      if (XXH3_64bits(v->base, XPC_H_CHECKSUM) == xp_le64(v->base + XPC_H_CHECKSUM) &&
          data_end >= xp_le64(v->base + XPC_H_DATA_OFFSET) && data_end < UINT64_MAX - XPC_FOOTER_SIZE &&
          data_end + XPC_FOOTER_SIZE > v->size) {
        return xp_fail(err, XPACK_ERR_TRUNCATED,
                       "%s: truncated: the file has %llu bytes, but its header puts the end of the data area at "
                       "byte %llu, so it must have at least %llu (and its footer is missing)",
                          name, (unsigned long long)v->size, (unsigned long long)data_end,
                          (unsigned long long)(data_end + XPC_FOOTER_SIZE));
      }
      const uint64_t footer_end = data_end >= XPC_HEADER_SIZE && data_end < v->size ? find_sound_footer_end(v, data_end) : 0;
      if (footer_end != 0) {
        return xp_fail(err, XPACK_ERR_CORRUPT,
                       "%s: the file has %llu bytes, but its footer (at offset %llu) says it has %llu: %llu bytes were "
                       "appended after it", name, (unsigned long long)v->size,
                       (unsigned long long)(footer_end - XPC_FOOTER_SIZE), (unsigned long long)footer_end,
                       (unsigned long long)(v->size - footer_end));
      }
      return xp_fail(err, XPACK_ERR_TRUNCATED,
                     "%s: footer magic \"XPACKEND\" missing at offset %llu: the file (%llu bytes) was truncated or "
                     "appended to", name, (unsigned long long)(v->size - XPC_FOOTER_SIZE + XPC_F_MAGIC),
                        (unsigned long long)v->size);
    }
    return xp_fail(err, XPACK_ERR_NOT_XPACK, "%s: not an xpack cache (no magic at offset 0 or at the end)", name);
  }
  v->major = xp_le16(f + XPC_F_MAJOR);
  v->minor = xp_le16(f + XPC_F_MINOR);
  if (v->major != XPC_VERSION_MAJOR) {
    return xp_fail(err, XPACK_ERR_VERSION,
                   "%s: footer: format version %u.%u, this xpack reads major version %u only", name, v->major,
                   v->minor, XPC_VERSION_MAJOR);
  }
  uint64_t sum = XXH3_64bits(f, XPC_F_CHECKSUM);
  if (sum != xp_le64(f + XPC_F_CHECKSUM)) {
    return xp_fail(err, XPACK_ERR_CORRUPT, "%s: footer checksum at offset %llu does not match (expected %016llx)",
                   name, (unsigned long long)(v->size - XPC_FOOTER_SIZE + XPC_F_CHECKSUM),
                   (unsigned long long)sum);
  }
  if (xp_le32(f + XPC_F_FOOTER_SIZE) != XPC_FOOTER_SIZE) {
    return xp_fail(err, XPACK_ERR_CORRUPT, "%s: footer: footer_size is %u, expected %u", name,
                   xp_le32(f + XPC_F_FOOTER_SIZE), XPC_FOOTER_SIZE);
  }
  uint64_t file_size = xp_le64(f + XPC_F_FILE_SIZE);
  if (file_size != v->size) {
    return xp_fail(err, file_size > v->size ? XPACK_ERR_TRUNCATED : XPACK_ERR_CORRUPT,
                   "%s: footer: file_size says %llu bytes, the file has %llu", name,
                   (unsigned long long)file_size, (unsigned long long)v->size);
  }
  v->flags = xp_le32(f + XPC_F_FLAGS);
  v->metadata_offset = xp_le64(f + XPC_F_METADATA_OFFSET);
  v->metadata_size = xp_le64(f + XPC_F_METADATA_SIZE);
  v->metadata_hash = xp_le64(f + XPC_F_METADATA_HASH);
  v->dir_offset = xp_le64(f + XPC_F_DIR_OFFSET);
  v->dir_count = xp_le32(f + XPC_F_DIR_COUNT);
  uint64_t footer_start = v->size - XPC_FOOTER_SIZE;
  if (v->metadata_offset < XPC_HEADER_SIZE) {
    return xp_fail(err, XPACK_ERR_CORRUPT, "%s: footer: metadata_offset %llu lies inside the %d-byte header", name,
                   (unsigned long long)v->metadata_offset, XPC_HEADER_SIZE);
  }
  if (!xp_fits(v->metadata_offset, v->metadata_size, footer_start) ||
      v->metadata_offset + v->metadata_size != footer_start) {
    return xp_fail(err, XPACK_ERR_CORRUPT,
                   "%s: footer: metadata area [%llu, +%llu) must end where the footer starts (%llu)", name,
                   (unsigned long long)v->metadata_offset, (unsigned long long)v->metadata_size,
                      (unsigned long long)footer_start);
  }
  if (v->dir_count == 0 || v->dir_count > 4096) {
    return xp_fail(err, XPACK_ERR_CORRUPT, "%s: footer: table directory count %u, expected 1 to 4096", name,
                   v->dir_count);
  }
  if (v->dir_offset < v->metadata_offset ||
      !xp_fits(v->dir_offset, (uint64_t)v->dir_count * XPC_DIR_ENTRY_SIZE, footer_start)) {
    return xp_fail(err, XPACK_ERR_CORRUPT, "%s: footer: table directory (offset %llu, %u entries) lies outside the "
                   "metadata area [%llu, %llu)", name, (unsigned long long)v->dir_offset, v->dir_count,
                   (unsigned long long)v->metadata_offset, (unsigned long long)footer_start);
  }
  uint64_t dir_hash = XXH3_64bits(v->base + v->dir_offset, (size_t)v->dir_count * XPC_DIR_ENTRY_SIZE);
  if (dir_hash != xp_le64(f + XPC_F_DIR_HASH)) {
    return xp_fail(err, XPACK_ERR_CORRUPT,
                   "%s: table directory at offset %llu fails its checksum: XXH3-64 %016llx, the footer records "
                   "%016llx", name, (unsigned long long)v->dir_offset, (unsigned long long)dir_hash,
                   (unsigned long long)xp_le64(f + XPC_F_DIR_HASH));
  }
  return XPACK_OK;
}

static xpack_status open_header(xp_view* v, const char* name, int allow_transport, xpack_error* err) {
  const uint8_t* h = v->base;
  if (memcmp(h, XPC_HEADER_MAGIC, XPC_HEADER_MAGIC_SIZE) != 0) {
    return xp_fail(err, XPACK_ERR_CORRUPT,
                   "%s: header magic at offset 0 is %02x %02x %02x %02x %02x %02x %02x %02x, expected 89 58 50 43 0d "
                   "0a 1a 0a (\\x89XPC\\r\\n\\x1a\\n; the footer is present)", name, h[0], h[1], h[2], h[3], h[4], h[5],
                   h[6], h[7]);
  }
  uint64_t sum = XXH3_64bits(h, XPC_H_CHECKSUM);
  if (sum != xp_le64(h + XPC_H_CHECKSUM)) {
    return xp_fail(err, XPACK_ERR_CORRUPT,
                   "%s: header checksum at offset %d does not match: XXH3-64 of bytes [0, %d) is %016llx, the field "
                   "holds %016llx", name, XPC_H_CHECKSUM, XPC_H_CHECKSUM, (unsigned long long)sum,
                   (unsigned long long)xp_le64(h + XPC_H_CHECKSUM));
  }
  if (xp_le16(h + XPC_H_MAJOR) != v->major || xp_le16(h + XPC_H_MINOR) != v->minor) {
    return xp_fail(err, XPACK_ERR_CORRUPT, "%s: header version %u.%u differs from footer version %u.%u", name,
                   xp_le16(h + XPC_H_MAJOR), xp_le16(h + XPC_H_MINOR), v->major, v->minor);
  }
  if (xp_le32(h + XPC_H_HEADER_SIZE) != XPC_HEADER_SIZE) {
    return xp_fail(err, XPACK_ERR_CORRUPT, "%s: header: header_size is %u, expected %u", name,
                   xp_le32(h + XPC_H_HEADER_SIZE), XPC_HEADER_SIZE);
  }
  if (xp_le32(h + XPC_H_FLAGS) != v->flags) {
    return xp_fail(err, XPACK_ERR_CORRUPT, "%s: header flags %#x differ from footer flags %#x", name,
                   xp_le32(h + XPC_H_FLAGS), v->flags);
  }
  if (v->flags & ~XPC_FLAGS_KNOWN) {
    return xp_fail(err, XPACK_ERR_CORRUPT, "%s: header flags at offset %d: unknown bits %#x (this version knows %#x)",
                   name, XPC_H_FLAGS, v->flags & ~XPC_FLAGS_KNOWN, (unsigned)XPC_FLAGS_KNOWN);
  }
  if ((v->flags & XPC_FLAG_TRANSPORT) && !allow_transport) {
    return xp_fail(err, XPACK_ERR_TRANSPORT,
                   "%s: this is the compressed transport form; run `xpack inflate %s OUT.xpc` to make it mappable",
                   name, name);
  }
  v->page_alignment = xp_le32(h + XPC_H_PAGE_ALIGNMENT);
  v->xnn_alignment = xp_le32(h + XPC_H_XNN_ALIGNMENT);
  v->arch = xp_le16(h + XPC_H_ARCH);
  v->data_offset = xp_le64(h + XPC_H_DATA_OFFSET);
  v->data_size = xp_le64(h + XPC_H_DATA_SIZE);
  int pow2 = v->page_alignment >= 4096 && v->page_alignment <= XPC_MAX_PAGE_ALIGNMENT &&
             (v->page_alignment & (v->page_alignment - 1)) == 0 && v->xnn_alignment >= 1 &&
             (v->xnn_alignment & (v->xnn_alignment - 1)) == 0 && v->xnn_alignment <= v->page_alignment;
  if (!pow2) {
    return xp_fail(err, XPACK_ERR_CORRUPT,
                   "%s: header: page_alignment %u / xnn_alignment %u must be powers of two, 4096 <= page <= %u, "
                   "xnn <= page", name, v->page_alignment, v->xnn_alignment, XPC_MAX_PAGE_ALIGNMENT);
  }
  if (!(v->flags & XPC_FLAG_TRANSPORT) && v->data_offset != v->page_alignment) {
    return xp_fail(err, XPACK_ERR_CORRUPT,
                   "%s: header: data_offset %llu must equal page_alignment %u (the first page holds only the header)",
                   name, (unsigned long long)v->data_offset, v->page_alignment);
  }
  if (v->data_offset < XPC_HEADER_SIZE || !xp_fits(v->data_offset, v->data_size, v->metadata_offset)) {
    return xp_fail(err, XPACK_ERR_CORRUPT, "%s: header: data area [%llu, +%llu) overlaps the header or metadata",
                   name, (unsigned long long)v->data_offset, (unsigned long long)v->data_size);
  }
  return XPACK_OK;
}

static xpack_status open_directory(xp_view* v, const char* name, xpack_error* err) {
  const uint64_t meta_end = v->metadata_offset + v->metadata_size;
  uint64_t table_bytes = 0; /* of every entry so far: at most metadata_size, since tables never overlap */
  for (uint32_t i = 0; i < v->dir_count; i++) {
    const uint8_t* d = v->base + v->dir_offset + (uint64_t)i * XPC_DIR_ENTRY_SIZE;
    uint32_t tag = xp_le32(d + XPC_D_TAG);
    xp_table t = {1, tag, xp_le32(d + XPC_D_RECORD_SIZE), xp_le64(d + XPC_D_OFFSET), xp_le64(d + XPC_D_COUNT),
                   xp_le64(d + XPC_D_HASH)};
    char tt[5];
    xp_tag_text(tag, tt);
    if (t.record_size == 0) {
      return xp_fail(err, XPACK_ERR_CORRUPT, "%s: directory[%u] table %s: record_size 0, expected at least 1", name, i,
                     tt);
    }
    if (t.count > (UINT64_MAX / t.record_size) || t.offset < v->metadata_offset ||
        !xp_fits(t.offset, t.count * t.record_size, meta_end)) {
      return xp_fail(err, XPACK_ERR_CORRUPT,
                     "%s: directory[%u] table %s (offset %llu, %llu x %u bytes) lies outside the metadata area",
                     name, i, tt, (unsigned long long)t.offset, (unsigned long long)t.count, t.record_size);
    }
    table_bytes += t.count * t.record_size; /* each at most metadata_size: no wrap */
    if (table_bytes > v->metadata_size) {
      return xp_fail(err, XPACK_ERR_CORRUPT,
                     "%s: directory[%u] table %s: the tables of directory[0..%u] take %llu bytes, more than the "
                     "%llu-byte metadata area holds (tables do not overlap)", name, i, tt, i,
                     (unsigned long long)table_bytes, (unsigned long long)v->metadata_size);
    }
    for (size_t k = 0; k < sizeof kTables / sizeof kTables[0]; k++) {
      if (kTables[k].tag != tag) continue;
      xp_table* slot = (xp_table*)((char*)v + kTables[k].field);
      if (slot->present) {
        return xp_fail(err, XPACK_ERR_CORRUPT, "%s: directory[%u]: table %s appears twice", name, i, tt);
      }
      if (kTables[k].byte_table && t.record_size != 1) {
        /* Offsets into a byte table count bytes; a larger record would leave what they point at undefined. */
        return xp_fail(err, XPACK_ERR_CORRUPT, "%s: directory[%u]: table %s record_size %u, expected 1 (a byte table)",
                       name, i, tt, t.record_size);
      }
      if (t.record_size < kTables[k].min_record_size) {
        return xp_fail(err, XPACK_ERR_CORRUPT, "%s: directory[%u]: table %s record_size %u, expected >= %u", name,
                       i, tt, t.record_size, kTables[k].min_record_size);
      }
      const uint64_t table_hash =
          kTables[k].hash_at_open ? XXH3_64bits(v->base + t.offset, (size_t)(t.count * t.record_size)) : t.hash;
      if (table_hash != t.hash) {
        return xp_fail(err, XPACK_ERR_CORRUPT,
                       "%s: table %s at offset %llu fails its checksum: XXH3-64 %016llx, directory[%u] records %016llx",
                       name, tt, (unsigned long long)t.offset, (unsigned long long)table_hash, i,
                       (unsigned long long)t.hash);
      }
      *slot = t;
    }
    /* Unknown tags are tables of a later minor version: skipped on purpose. */
  }
  for (size_t k = 0; k < sizeof kTables / sizeof kTables[0]; k++) {
    const xp_table* slot = (const xp_table*)((const char*)v + kTables[k].field);
    if (kTables[k].required && !slot->present) {
      char tt[5];
      xp_tag_text(kTables[k].tag, tt);
      return xp_fail(err, XPACK_ERR_CORRUPT, "%s: required table %s is missing from the directory", name, tt);
    }
  }
  /* Records of these tables are named by u32 indices or offsets. */
  const xp_table* indexed[] = {&v->regions, &v->strings, &v->families};
  for (size_t k = 0; k < sizeof indexed / sizeof indexed[0]; k++) {
    if (indexed[k]->count > UINT32_MAX) {
      char tt[5];
      xp_tag_text(indexed[k]->tag, tt);
      return xp_fail(err, XPACK_ERR_CORRUPT, "%s: table %s at offset %llu has %llu records, at most 2^32 - 1 (%u)",
                     name, tt, (unsigned long long)indexed[k]->offset, (unsigned long long)indexed[k]->count,
                     UINT32_MAX);
    }
  }
  if (v->families.count > XPC_MAX_FAMILIES) {
    return xp_fail(err, XPACK_ERR_CORRUPT, "%s: table FAMI has %llu records, at most %u are allowed", name,
                   (unsigned long long)v->families.count, XPC_MAX_FAMILIES);
  }
  return XPACK_OK;
}

xpack_status xp_view_open(xp_view* v, const uint8_t* base, uint64_t size, const char* name, int allow_transport,
                          xpack_error* err) {
  memset(v, 0, sizeof *v);
  v->base = base;
  v->size = size;
  if (size < XPC_HEADER_MAGIC_SIZE || memcmp(base, XPC_HEADER_MAGIC, XPC_HEADER_MAGIC_SIZE) != 0) {
    if (size >= XPC_FOOTER_SIZE && memcmp(base + size - XPC_FOOTER_MAGIC_SIZE, XPC_FOOTER_MAGIC, 8) == 0) {
      /* footer intact, header damaged: report it as corruption, with the footer's view */
    } else {
      return xp_fail(err, XPACK_ERR_NOT_XPACK, "%s: not an xpack cache (expected magic 89 58 50 43 0d 0a 1a 0a at offset 0)",
                     name);
    }
  }
  if (size < XPC_HEADER_SIZE + XPC_FOOTER_SIZE) {
    return xp_fail(err, XPACK_ERR_TRUNCATED, "%s: %llu bytes is shorter than a header and a footer (%d bytes)", name,
                   (unsigned long long)size, XPC_HEADER_SIZE + XPC_FOOTER_SIZE);
  }
  xpack_status st = open_footer(v, name, err);
  if (st == XPACK_OK) st = open_header(v, name, allow_transport, err);
  if (st == XPACK_OK) st = open_directory(v, name, err);
  return st;
}

int xp_view_string_span(const xp_view* v, uint32_t offset, const char** s, uint32_t* len) {
  const uint64_t n = v->strings.count;
  if ((uint64_t)offset + 4 > n) return XP_STRING_LENGTH_OUTSIDE;
  const uint8_t* p = v->base + v->strings.offset + offset;
  uint32_t l = xp_le32(p);
  if ((uint64_t)offset + 4 + l + 1 > n) return XP_STRING_BYTES_OUTSIDE;
  if (p[4 + l] != 0) return XP_STRING_UNTERMINATED;
  *s = (const char*)p + 4;
  *len = l;
  return 0;
}

int xp_view_string(const xp_view* v, uint32_t offset, const char** s, uint32_t* len) {
  const char* bytes;
  uint32_t l;
  const int fault = xp_view_string_span(v, offset, &bytes, &l);
  if (fault != 0) return fault;
  if (memchr(bytes, 0, l) != NULL) return XP_STRING_HOLDS_ZERO; /* FORMAT.md 5.4 */
  *s = bytes;
  *len = l;
  return 0;
}

const char* xp_view_string_fault(int fault) {
  switch (fault) {
    case XP_STRING_LENGTH_OUTSIDE: return "its length lies past the end of STRS";
    case XP_STRING_BYTES_OUTSIDE: return "its bytes run past the end of STRS";
    case XP_STRING_UNTERMINATED: return "no zero byte follows its bytes";
    case XP_STRING_HOLDS_ZERO: return "it holds a zero byte: strings hold none";
    default: return "a string";
  }
}

void xp_view_region(const xp_view* v, uint64_t index, xp_region* out) {
  const uint8_t* r = v->base + v->regions.offset + index * v->regions.record_size;
  out->offset = xp_le64(r + XPC_R_OFFSET);
  out->stored_size = xp_le64(r + XPC_R_STORED_SIZE);
  out->size = xp_le64(r + XPC_R_SIZE);
  out->hash = xp_le64(r + XPC_R_HASH);
}

uint64_t xp_view_region_bytes(const xp_view* v) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < v->regions.count; i++) {
    xp_region r;
    xp_view_region(v, i, &r);
    sum = r.size > UINT64_MAX - sum ? UINT64_MAX : sum + r.size;
  }
  return sum;
}

void xp_view_entry(const xp_view* v, uint64_t index, xp_entry* out) {
  const uint8_t* e = v->base + v->entries.offset + index * v->entries.record_size;
  out->key_hash = xp_le64(e + XPC_E_KEY_HASH);
  out->seed = xp_le32(e + XPC_E_SEED);
  out->kernel = xp_le32(e + XPC_E_KERNEL);
  out->bias = xp_le32(e + XPC_E_BIAS);
  out->region = xp_le32(e + XPC_E_REGION);
  out->family = xp_le32(e + XPC_E_FAMILY);
  out->flags = xp_le32(e + XPC_E_FLAGS);
  out->check = xp_le64(e + XPC_E_CHECK);
}

void xp_view_family(const xp_view* v, uint64_t index, xp_family* out) {
  const uint8_t* m = v->base + v->families.offset + index * v->families.record_size;
  out->name = xp_le32(m + XPC_M_NAME);
  out->flags = xp_le32(m + XPC_M_FLAGS);
  out->probe_hash = xp_le64(m + XPC_M_PROBE_HASH);
  /* Before 1.3 the field was reserved: whatever it holds records nothing. */
  out->probe_keys = v->minor >= XPC_PROBE_KEYS_FIRST_MINOR ? xp_le64(m + XPC_M_PROBE_KEYS) : 0;
}

void xp_put_region(uint8_t* r, const xp_region* region) {
  xp_put64(r + XPC_R_OFFSET, region->offset);
  xp_put64(r + XPC_R_STORED_SIZE, region->stored_size);
  xp_put64(r + XPC_R_SIZE, region->size);
  xp_put64(r + XPC_R_HASH, region->hash);
}

uint64_t xp_entry_check_of(const uint8_t* entry_record, const uint8_t* region_record) {
  uint8_t buf[XPC_E_CHECK + XPC_REGION_SIZE];
  memcpy(buf, entry_record, XPC_E_CHECK);
  memcpy(buf + XPC_E_CHECK, region_record, XPC_REGION_SIZE);
  return XXH3_64bits(buf, sizeof buf);
}

uint64_t xp_entry_check(const xp_view* v, uint64_t index, const xp_region* region) {
  uint8_t record[XPC_REGION_SIZE];
  xp_put_region(record, region);
  return xp_entry_check_of(v->base + v->entries.offset + index * v->entries.record_size, record);
}

int xp_region_is_sound(const xp_view* v, const xp_region* r) {
  const int transport = (v->flags & XPC_FLAG_TRANSPORT) != 0;
  uint64_t stored = transport ? r->stored_size : r->size;
  if (!transport && r->stored_size != r->size) return 0;
  if (r->size == 0 || r->size % v->xnn_alignment != 0 || r->offset < v->data_offset ||
      !xp_fits(r->offset, stored, v->data_offset + v->data_size)) {
    return 0;
  }
  if (transport) return 1;
  const uint64_t alignment =
      r->size >= v->page_alignment ? v->page_alignment : xp_small_region_alignment(v->xnn_alignment);
  return r->offset % alignment == 0;
}

int xp_region_bytes_match(const xp_view* v, const xp_region* r, char* why, size_t why_size) {
  const uint64_t h = XXH3_64bits(v->base + r->offset, (size_t)r->size);
  if (h == r->hash) return 1;
  if (why != NULL) {
    snprintf(why, why_size, "XXH3-64 of its %llu bytes is %016llx, the record says %016llx",
             (unsigned long long)r->size, (unsigned long long)h, (unsigned long long)r->hash);
  }
  return 0;
}

uint64_t xp_key_hash(uint32_t seed, const char* kernel, size_t kernel_len, const char* bias, size_t bias_len) {
  /* One call over the concatenation when it fits on the stack: the loader hashes a key per look-up, and
   * XXH3's streaming state costs more than the hash itself for short keys. Same bytes, same hash. */
  uint8_t flat[1024];
  const size_t total = 12 + kernel_len + (bias != NULL ? bias_len : 0);
  if (total <= sizeof flat) {
    uint8_t* p = flat;
    xp_put32(p, seed);
    xp_put32(p + 4, (uint32_t)kernel_len);
    memcpy(p + 8, kernel, kernel_len);
    p += 8 + kernel_len;
    xp_put32(p, bias != NULL ? (uint32_t)bias_len : XPC_NONE);
    if (bias != NULL) memcpy(p + 4, bias, bias_len);
    return XXH3_64bits(flat, total);
  }
  XXH3_state_t st;
  uint8_t word[4];
  XXH3_64bits_reset(&st);
  xp_put32(word, seed);
  XXH3_64bits_update(&st, word, 4);
  xp_put32(word, (uint32_t)kernel_len);
  XXH3_64bits_update(&st, word, 4);
  XXH3_64bits_update(&st, kernel, kernel_len);
  xp_put32(word, bias != NULL ? (uint32_t)bias_len : XPC_NONE);
  XXH3_64bits_update(&st, word, 4);
  if (bias != NULL) XXH3_64bits_update(&st, bias, bias_len);
  return XXH3_64bits_digest(&st);
}

int xp_string_order(const char* a, size_t a_len, const char* b, size_t b_len) {
  if (a == NULL || b == NULL) return (a != NULL) - (b != NULL);
  const int c = memcmp(a, b, a_len < b_len ? a_len : b_len);
  if (c != 0) return c;
  return (a_len > b_len) - (a_len < b_len);
}

/* The looked-up string (s, len; NULL: none) against the string of STRS at offset (XPC_NONE: none), in
 * xp_string_order. An offset that names no string sorts after every key: it never matches, and the search
 * stays deterministic over a damaged run. */
static int compare_string(const xp_view* v, const char* s, size_t len, uint32_t offset) {
  if (offset == XPC_NONE) return xp_string_order(s, len, NULL, 0);
  /* The span, not xp_view_string, whose scan for a zero byte would read all of a long stored string at every
   * comparison (a search meets the same middle entries for every key: verify of a 24 MB file whose middle entry
   * names a 20 MB string took minutes, found by a review): bytes past the shorter of the two are not read, and
   * a stored string equal to s holds a zero byte only where s does. */
  const char* stored;
  uint32_t stored_len;
  if (xp_view_string_span(v, offset, &stored, &stored_len) != 0) return -1;
  const int order = xp_string_order(s, len, stored, stored_len);
  if (order == 0 && memchr(s, 0, len) != NULL) return -1; /* FORMAT.md 5.4: no string holds a zero byte */
  return order;
}

typedef struct lookup_key {
  uint64_t hash;
  uint32_t seed;
  const char* kernel;
  size_t kernel_len;
  const char* bias; /* NULL: no bias */
  size_t bias_len;
} lookup_key;

/* The looked-up key against entry i in ENTR's order: key_hash, seed, kernel identity, bias identity. */
static int compare_key(const xp_view* v, const lookup_key* k, uint64_t i) {
  const uint8_t* e = v->base + v->entries.offset + i * v->entries.record_size;
  const uint64_t eh = xp_le64(e + XPC_E_KEY_HASH);
  if (k->hash != eh) return k->hash < eh ? -1 : 1;
  const uint32_t es = xp_le32(e + XPC_E_SEED);
  if (k->seed != es) return k->seed < es ? -1 : 1;
  const int c = compare_string(v, k->kernel, k->kernel_len, xp_le32(e + XPC_E_KERNEL));
  return c != 0 ? c : compare_string(v, k->bias, k->bias_len, xp_le32(e + XPC_E_BIAS));
}

xp_find_result xp_view_find(const xp_view* v, uint32_t seed, const char* kernel, size_t kernel_len,
                              const char* bias, size_t bias_len, xp_entry* entry, xp_region* region,
                              uint64_t* index) {
  const lookup_key k = {xp_key_hash(seed, kernel, kernel_len, bias, bias_len), seed, kernel, kernel_len, bias,
                         bias_len};
  const uint64_t n = v->entries.count;
  /* A binary search over the whole key, not over key_hash alone: equal key hashes are ordered by seed and
   * identities (FORMAT.md 5.3), and a crafted file can give a million entries one key hash, which a scan of
   * the run would read on every look-up (3 ms each for 1,000,000). */
  uint64_t lo = 0, hi = n;
  while (lo < hi) { /* the first entry not before the key */
    const uint64_t mid = lo + (hi - lo) / 2;
    if (compare_key(v, &k, mid) > 0) lo = mid + 1; else hi = mid;
  }
  if (lo == n || compare_key(v, &k, lo) != 0) return XPC_NOT_FOUND;
  /* A key that two entries claim (5.3 forbids it) is served by neither, so that which one a reader meets first
   * never decides what XNNPACK gets; in the order of 5.3 they are neighbours. */
  if ((lo + 1 < n && compare_key(v, &k, lo + 1) == 0) || (lo > 0 && compare_key(v, &k, lo - 1) == 0)) {
    return XPC_ENTRY_CORRUPT;
  }
  xp_entry e;
  xp_region r;
  xp_view_entry(v, lo, &e);
  if (e.region >= v->regions.count || (e.flags & ~XPC_ENTRY_FLAGS_KNOWN) != 0) return XPC_ENTRY_CORRUPT;
  xp_view_region(v, e.region, &r);
  if (xp_entry_check(v, lo, &r) != e.check || !xp_region_is_sound(v, &r)) return XPC_ENTRY_CORRUPT;
  *entry = e;
  *region = r;
  if (index != NULL) *index = lo;
  return XPC_FOUND;
}

bool xp_identity_is_ambiguous(const char* identity, size_t len) {
  return identity != NULL && len == sizeof XPC_IDENTITY_AMBIGUOUS - 1 &&
         memcmp(identity, XPC_IDENTITY_AMBIGUOUS, len) == 0;
}

bool xp_view_entry_findable(const xp_view* v, uint64_t index, size_t max_identity_len) {
  if (index >= v->entries.count) return false;
  xp_entry e;
  xp_view_entry(v, index, &e);
  const char *kernel, *bias = NULL;
  uint32_t kernel_len, bias_len = 0;
  if (xp_view_string(v, e.kernel, &kernel, &kernel_len) != 0 ||
      (e.bias != XPC_NONE && xp_view_string(v, e.bias, &bias, &bias_len) != 0)) {
    return false;
  }
  if (kernel_len == 0 || kernel_len > max_identity_len || (bias != NULL && (bias_len == 0 || bias_len > max_identity_len))) {
    return false;
  }
  if (xp_identity_is_ambiguous(kernel, kernel_len) || xp_identity_is_ambiguous(bias, bias_len)) return false;
  xp_entry found;
  xp_region region;
  uint64_t at = UINT64_MAX;
  return xp_view_find(v, e.seed, kernel, kernel_len, bias, bias_len, &found, &region, &at) == XPC_FOUND && at == index;
}
