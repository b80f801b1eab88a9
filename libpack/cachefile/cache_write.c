/* The metadata area, footer and header of a cache file, written: see cache_write.h. */
#include "cachefile/cache_write.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cachefile/region_place.h"
#include "common/error.h"
#include "common/le.h"

static uint64_t table_bytes(const xp_table_out* t) { return t->count * t->record_size; }

xpack_status xp_metadata_begin(xp_metadata_out* m, xp_table_out* tables, uint32_t count, uint64_t data_end,
                               const char* name, xpack_error* err) {
  memset(m, 0, sizeof *m);
  m->tables = tables;
  m->table_count = count;
  m->metadata_offset = xp_align_up(data_end, 8);
  uint64_t cursor = m->metadata_offset;
  for (uint32_t i = 0; i < count; i++) {
    tables[i].offset = cursor;
    cursor = xp_align_up(cursor + table_bytes(&tables[i]), 8);
  }
  m->dir_offset = cursor;
  m->metadata_size = m->dir_offset + (uint64_t)count * XPC_DIR_ENTRY_SIZE - m->metadata_offset;
  m->file_size = m->metadata_offset + m->metadata_size + XPC_FOOTER_SIZE;
  m->tail_size = (size_t)m->metadata_size + XPC_FOOTER_SIZE;
  m->tail = calloc(m->tail_size, 1);
  if (m->tail == NULL) {
    return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory for %llu bytes of metadata", name,
                   (unsigned long long)m->metadata_size);
  }
  for (uint32_t i = 0; i < count; i++) tables[i].bytes = m->tail + (tables[i].offset - m->metadata_offset);
  return XPACK_OK;
}

static const xp_table_out* find_table(const xp_metadata_out* m, uint32_t tag) {
  for (uint32_t i = 0; i < m->table_count; i++) {
    if (m->tables[i].tag == tag) return &m->tables[i];
  }
  return NULL;
}

uint8_t* xp_metadata_table(const xp_metadata_out* m, uint32_t tag) {
  const xp_table_out* t = find_table(m, tag);
  return t != NULL ? t->bytes : NULL;
}

void xp_metadata_put_entry_checks(xp_metadata_out* m) {
  const xp_table_out* regions = find_table(m, XPC_TAG_REGIONS);
  const xp_table_out* entries = find_table(m, XPC_TAG_ENTRIES);
  for (uint64_t i = 0; i < entries->count; i++) {
    uint8_t* e = entries->bytes + i * entries->record_size;
    xp_put64(e + XPC_E_CHECK,
             xp_entry_check_of(e, regions->bytes + (uint64_t)xp_le32(e + XPC_E_REGION) * regions->record_size));
  }
}

void xp_metadata_seal(xp_metadata_out* m, uint16_t major, uint16_t minor, uint32_t flags) {
  uint8_t* dir = m->tail + (m->dir_offset - m->metadata_offset);
  for (uint32_t i = 0; i < m->table_count; i++) {
    const xp_table_out* t = &m->tables[i];
    uint8_t* d = dir + (uint64_t)i * XPC_DIR_ENTRY_SIZE;
    xp_put32(d + XPC_D_TAG, t->tag);
    xp_put32(d + XPC_D_RECORD_SIZE, t->record_size);
    xp_put64(d + XPC_D_OFFSET, t->offset);
    xp_put64(d + XPC_D_COUNT, t->count);
    xp_put64(d + XPC_D_HASH, XXH3_64bits(t->bytes, (size_t)table_bytes(t)));
  }
  uint8_t* f = m->tail + m->metadata_size;
  xp_put64(f + XPC_F_METADATA_OFFSET, m->metadata_offset);
  xp_put64(f + XPC_F_METADATA_SIZE, m->metadata_size);
  xp_put64(f + XPC_F_DIR_OFFSET, m->dir_offset);
  xp_put32(f + XPC_F_DIR_COUNT, m->table_count);
  xp_put32(f + XPC_F_FOOTER_SIZE, XPC_FOOTER_SIZE);
  xp_put64(f + XPC_F_FILE_SIZE, m->file_size);
  xp_put64(f + XPC_F_METADATA_HASH, XXH3_64bits(m->tail, (size_t)m->metadata_size));
  xp_put64(f + XPC_F_DIR_HASH, XXH3_64bits(dir, (size_t)m->table_count * XPC_DIR_ENTRY_SIZE));
  xp_put16(f + XPC_F_MAJOR, major);
  xp_put16(f + XPC_F_MINOR, minor);
  xp_put32(f + XPC_F_FLAGS, flags);
  xp_put64(f + XPC_F_CHECKSUM, XXH3_64bits(f, XPC_F_CHECKSUM));
  memcpy(f + XPC_F_MAGIC, XPC_FOOTER_MAGIC, XPC_FOOTER_MAGIC_SIZE);
}

void xp_metadata_free(xp_metadata_out* m) {
  free(m->tail);
  m->tail = NULL;
}

void xp_put_entry(uint8_t* e, const xp_entry* entry) {
  xp_put64(e + XPC_E_KEY_HASH, entry->key_hash);
  xp_put32(e + XPC_E_SEED, entry->seed);
  xp_put32(e + XPC_E_KERNEL, entry->kernel);
  xp_put32(e + XPC_E_BIAS, entry->bias);
  xp_put32(e + XPC_E_REGION, entry->region);
  xp_put32(e + XPC_E_FAMILY, entry->family);
  xp_put32(e + XPC_E_FLAGS, entry->flags);
}

void xp_put_provenance(uint8_t* p, const xp_provenance* input) {
  xp_put32(p + XPC_P_NAME, input->name);
  xp_put32(p + XPC_P_KIND, input->kind);
  xp_put64(p + XPC_P_FILE_SIZE, input->file_size);
  xp_put64(p + XPC_P_FILE_HASH, input->file_hash);
  xp_put64(p + XPC_P_PROGRAM_SIZE, input->program_size);
  xp_put64(p + XPC_P_PROGRAM_HASH, input->program_hash);
}

void xp_put_info(uint8_t* record, uint32_t key, uint32_t value) {
  xp_put32(record + XPC_I_KEY, key);
  xp_put32(record + XPC_I_VALUE, value);
}

void xp_put_family(uint8_t* m, const xp_family* family) {
  xp_put32(m + XPC_M_NAME, family->name);
  xp_put32(m + XPC_M_FLAGS, family->flags);
  xp_put64(m + XPC_M_PROBE_HASH, family->probe_hash);
  xp_put64(m + XPC_M_PROBE_KEYS, family->probe_keys);
}

uint64_t xp_string_size(uint32_t len) { return 4 + (uint64_t)len + 1; }

void xp_put_string(uint8_t* at, const char* text, uint32_t len) {
  xp_put32(at, len);
  memcpy(at + 4, text, len);
}

void xp_header_put(uint8_t* h, const xp_header_fields* fields) {
  memcpy(h + XPC_H_MAGIC, XPC_HEADER_MAGIC, XPC_HEADER_MAGIC_SIZE);
  xp_put16(h + XPC_H_MAJOR, fields->major);
  xp_put16(h + XPC_H_MINOR, fields->minor);
  xp_put32(h + XPC_H_HEADER_SIZE, XPC_HEADER_SIZE);
  xp_put32(h + XPC_H_FLAGS, fields->flags);
  xp_put32(h + XPC_H_PAGE_ALIGNMENT, fields->page_alignment);
  xp_put32(h + XPC_H_XNN_ALIGNMENT, fields->xnn_alignment);
  xp_put16(h + XPC_H_ARCH, fields->arch);
  xp_put64(h + XPC_H_DATA_OFFSET, fields->data_offset);
  xp_put64(h + XPC_H_DATA_SIZE, fields->data_size);
  xp_put64(h + XPC_H_CHECKSUM, XXH3_64bits(h, XPC_H_CHECKSUM));
}

xpack_status xp_mappable_offsets(const xp_view* v, const char* name, uint64_t* offsets, uint64_t* data_end,
                                 xpack_error* err) {
  const uint64_t small_alignment = xp_small_region_alignment(v->xnn_alignment);
  const uint64_t limit = (uint64_t)INT64_MAX / 2; /* leaves room for the metadata; off_t must hold it all */
  uint64_t cursor = v->page_alignment;
  for (uint64_t i = 0; i < v->regions.count; i++) {
    xp_region r;
    xp_view_region(v, i, &r);
    const uint64_t offset = xp_place_region(cursor, r.size, v->page_alignment, small_alignment);
    if (r.size > limit || !xp_fits(offset, r.size, limit)) {
      return xp_fail(err, XPACK_ERR_CORRUPT, "%s: region %llu at offset %llu: size %llu does not fit a file", name,
                     (unsigned long long)i, (unsigned long long)r.offset, (unsigned long long)r.size);
    }
    offsets[i] = offset;
    cursor = offset + r.size;
  }
  *data_end = cursor;
  return XPACK_OK;
}

xpack_status xp_metadata_rebuild(const xp_view* v, const char* name, const uint64_t* offsets,
                                 const uint64_t* stored, uint64_t data_offset, uint64_t data_end, uint32_t flags,
                                 xp_rebuilt* out, xpack_error* err) {
  memset(out, 0, sizeof *out);
  xp_table_out* tables = malloc(((size_t)v->dir_count + 1) * sizeof *tables);
  if (tables == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", name);
  const uint8_t* dir = v->base + v->dir_offset;
  for (uint32_t i = 0; i < v->dir_count; i++) {
    const uint8_t* d = dir + (uint64_t)i * XPC_DIR_ENTRY_SIZE;
    tables[i] = (xp_table_out){xp_le32(d + XPC_D_TAG), xp_le32(d + XPC_D_RECORD_SIZE), xp_le64(d + XPC_D_COUNT), 0,
                                NULL};
  }
  xp_metadata_out m;
  xpack_status st = xp_metadata_begin(&m, tables, v->dir_count, data_end, name, err);
  if (st != XPACK_OK) {
    free(tables);
    return st;
  }
  for (uint32_t i = 0; i < v->dir_count; i++) {
    const uint8_t* d = dir + (uint64_t)i * XPC_DIR_ENTRY_SIZE;
    memcpy(tables[i].bytes, v->base + xp_le64(d + XPC_D_OFFSET), (size_t)table_bytes(&tables[i]));
  }
  uint8_t* regions = xp_metadata_table(&m, XPC_TAG_REGIONS);
  for (uint64_t i = 0; i < v->regions.count; i++) {
    uint8_t* r = regions + i * v->regions.record_size;
    xp_put64(r + XPC_R_OFFSET, offsets[i]);
    xp_put64(r + XPC_R_STORED_SIZE, stored[i]);
  }
  xp_metadata_put_entry_checks(&m);
  xp_metadata_seal(&m, v->major, v->minor, flags);
  free(tables);

  memcpy(out->header, v->base, XPC_HEADER_SIZE); /* keeps the reserved fields as they are */
  const xp_header_fields fields = {v->major, v->minor, flags, v->page_alignment, v->xnn_alignment, v->arch,
                                    data_offset, data_end - data_offset};
  xp_header_put(out->header, &fields);
  out->tail = m.tail;
  out->tail_size = m.tail_size;
  out->metadata_offset = m.metadata_offset;
  out->file_size = m.file_size;
  return XPACK_OK;
}
