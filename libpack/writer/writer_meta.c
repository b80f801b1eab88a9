/* Finishing a cache file: the metadata tables, the directory, the footer and the header, then fsync and
 * an atomic rename. Layout and every field: docs/FORMAT.md. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xnnpack.h>
#include <xxhash.h>

#include "common/error.h"
#include "common/file_io.h"
#include "common/le.h"
#include "common/target.h"
#include "writer/writer_internal.h"
#include "xpc_format.h"

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }

static _Thread_local const xpack_writer* sort_writer;

static int compare_strings(uint32_t a, uint32_t b) {
  if (a == b) return 0;
  if (a == XPC_NONE) return -1;
  if (b == XPC_NONE) return 1;
  const wr_string* x = &sort_writer->strings[a];
  const wr_string* y = &sort_writer->strings[b];
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->text, y->text, n);
  if (c != 0) return c;
  return x->len < y->len ? -1 : x->len > y->len;
}

/* Families in name order, for the same reason as entries. */
static int compare_families(const void* pa, const void* pb) {
  return compare_strings(((const wr_family*)pa)->name, ((const wr_family*)pb)->name);
}

/* Total order, so that the file does not depend on the order XNNPACK packed things in. */
static int compare_entries(const void* pa, const void* pb) {
  const wr_entry* a = pa;
  const wr_entry* b = pb;
  if (a->key_hash != b->key_hash) return a->key_hash < b->key_hash ? -1 : 1;
  if (a->seed != b->seed) return a->seed < b->seed ? -1 : 1;
  int c = compare_strings(a->kernel, b->kernel);
  return c != 0 ? c : compare_strings(a->bias, b->bias);
}

typedef struct table_out {
  uint32_t tag, record_size;
  uint64_t offset, count;
} table_out;

static xpack_status write_all(int fd, const uint8_t* p, size_t n, uint64_t offset, const char* path,
                              xpack_error* err) {
  if (xp_write_at(fd, p, n, offset) == 0) return XPACK_OK;
  return xpack_fail(err, XPACK_ERR_IO, "%s: write failed at offset %llu: %s", path, (unsigned long long)offset,
                    strerror(errno));
}

static void put_region(uint8_t* r, const wr_region* src) {
  xp_put64(r + XPC_R_OFFSET, src->offset);
  xp_put64(r + XPC_R_STORED_SIZE, src->size);
  xp_put64(r + XPC_R_SIZE, src->size);
  xp_put64(r + XPC_R_HASH, src->hash64);
}

xpack_status wr_write_metadata(xpack_writer* w, xpack_error* err) {
  const char* path = w->out_path;
  /* String offsets inside STRS: u32 length, bytes, NUL. */
  uint64_t* string_offset = calloc(w->string_count + 1, sizeof *string_offset);
  wr_entry* sorted = malloc((w->entry_count + 1) * sizeof *sorted);
  if (string_offset == NULL || sorted == NULL) {
    free(string_offset);
    free(sorted);
    return xpack_fail(err, XPACK_ERR_NOMEM, "%s: out of memory writing the index", path);
  }
  /* Laid out in ticket order (writer_order.c), not interning order, which depends on thread timing. */
  uint32_t* string_order = wr_string_order(w);
  if (string_order == NULL) {
    free(string_offset);
    free(sorted);
    return xpack_fail(err, XPACK_ERR_NOMEM, "%s: out of memory writing the index", path);
  }
  uint64_t strings_size = 0;
  for (size_t k = 0; k < w->string_count; k++) {
    const uint32_t i = string_order[k];
    string_offset[i] = strings_size;
    strings_size += 4 + (uint64_t)w->strings[i].len + 1;
  }
  free(string_order);
  const size_t build_id_size = xnn_experimental_get_build_identifier_size();
  /* family_rank[i]: the FAMI index of w->families[i] once sorted by name. */
  wr_family* families = malloc((w->family_count + 1) * sizeof *families);
  uint32_t* family_rank = malloc((w->family_count + 1) * sizeof *family_rank);
  if (families == NULL || family_rank == NULL) {
    free(families);
    free(family_rank);
    free(string_offset);
    free(sorted);
    return xpack_fail(err, XPACK_ERR_NOMEM, "%s: out of memory writing the index", path);
  }
  memcpy(families, w->families, w->family_count * sizeof *families);
  sort_writer = w;
  qsort(families, w->family_count, sizeof *families, compare_families);
  for (size_t i = 0; i < w->family_count; i++) {
    for (size_t k = 0; k < w->family_count; k++) {
      if (families[k].name == w->families[i].name) family_rank[i] = (uint32_t)k;
    }
  }

  const uint64_t metadata_offset = align_up(w->data_end, 8);
  table_out t[] = {
      {XPC_TAG_REGIONS, XPC_REGION_SIZE, 0, w->region_count},
      {XPC_TAG_ENTRIES, XPC_ENTRY_SIZE, 0, w->entry_count},
      {XPC_TAG_STRINGS, 1, 0, strings_size},
      {XPC_TAG_PROVENANCE, XPC_PROVENANCE_SIZE, 0, w->input_count},
      {XPC_TAG_BUILD_ID, 1, 0, build_id_size},
      {XPC_TAG_INFO, XPC_INFO_SIZE, 0, w->info_count},
      {XPC_TAG_FAMILIES, XPC_FAMILY_SIZE, 0, w->family_count},
  };
  const size_t ntables = sizeof t / sizeof t[0];
  uint64_t cursor = metadata_offset;
  for (size_t i = 0; i < ntables; i++) {
    t[i].offset = cursor;
    cursor = align_up(cursor + t[i].count * t[i].record_size, 8);
  }
  const uint64_t dir_offset = cursor;
  const uint64_t footer_offset = dir_offset + ntables * XPC_DIR_ENTRY_SIZE;
  const uint64_t file_size = footer_offset + XPC_FOOTER_SIZE;
  const size_t meta_size = (size_t)(footer_offset - metadata_offset);

  uint8_t* meta = calloc(meta_size + XPC_FOOTER_SIZE, 1);
  if (meta == NULL) {
    free(families);
    free(family_rank);
    free(string_offset);
    free(sorted);
    return xpack_fail(err, XPACK_ERR_NOMEM, "%s: out of memory for %zu bytes of metadata", path, meta_size);
  }
#define AT(table) (meta + (t[table].offset - metadata_offset))
  for (size_t i = 0; i < w->region_count; i++) put_region(AT(0) + i * XPC_REGION_SIZE, &w->regions[i]);

  memcpy(sorted, w->entries, w->entry_count * sizeof *sorted);
  sort_writer = w;
  qsort(sorted, w->entry_count, sizeof *sorted, compare_entries);
  for (size_t i = 0; i < w->entry_count; i++) {
    uint8_t* e = AT(1) + i * XPC_ENTRY_SIZE;
    const wr_entry* s = &sorted[i];
    xp_put64(e + XPC_E_KEY_HASH, s->key_hash);
    xp_put32(e + XPC_E_SEED, s->seed);
    xp_put32(e + XPC_E_KERNEL, (uint32_t)string_offset[s->kernel]);
    xp_put32(e + XPC_E_BIAS, s->bias == XPC_NONE ? XPC_NONE : (uint32_t)string_offset[s->bias]);
    xp_put32(e + XPC_E_REGION, s->region);
    xp_put32(e + XPC_E_FAMILY, family_rank[s->family]);
    xp_put32(e + XPC_E_FLAGS, s->flags);
    uint8_t check[XPC_E_CHECK + XPC_REGION_SIZE];
    memcpy(check, e, XPC_E_CHECK);
    put_region(check + XPC_E_CHECK, &w->regions[s->region]);
    xp_put64(e + XPC_E_CHECK, XXH3_64bits(check, sizeof check));
  }
  for (size_t i = 0; i < w->string_count; i++) {
    uint8_t* s = AT(2) + string_offset[i];
    xp_put32(s, w->strings[i].len);
    memcpy(s + 4, w->strings[i].text, w->strings[i].len);
  }
  for (size_t i = 0; i < w->input_count; i++) {
    uint8_t* p = AT(3) + i * XPC_PROVENANCE_SIZE;
    const wr_input* in = &w->inputs[i];
    xp_put32(p + XPC_P_NAME, (uint32_t)string_offset[in->name]);
    xp_put32(p + XPC_P_KIND, in->kind);
    xp_put64(p + XPC_P_FILE_SIZE, in->file_size);
    xp_put64(p + XPC_P_FILE_HASH, in->file_hash);
    xp_put64(p + XPC_P_PROGRAM_SIZE, in->program_size);
    xp_put64(p + XPC_P_PROGRAM_HASH, in->program_hash);
  }
  memcpy(AT(4), xnn_experimental_get_build_identifier_data(), build_id_size);
  for (size_t i = 0; i < w->info_count; i++) {
    xp_put32(AT(5) + i * XPC_INFO_SIZE + XPC_I_KEY, (uint32_t)string_offset[w->info[2 * i]]);
    xp_put32(AT(5) + i * XPC_INFO_SIZE + XPC_I_VALUE, (uint32_t)string_offset[w->info[2 * i + 1]]);
  }
  for (size_t i = 0; i < w->family_count; i++) {
    uint8_t* m = AT(6) + i * XPC_FAMILY_SIZE;
    xp_put32(m + XPC_M_NAME, (uint32_t)string_offset[families[i].name]);
    xp_put32(m + XPC_M_FLAGS, 0);
    xp_put64(m + XPC_M_PROBE_HASH, families[i].probe_hash);
  }
  uint8_t* dir = meta + (dir_offset - metadata_offset);
  for (size_t i = 0; i < ntables; i++) {
    uint8_t* d = dir + i * XPC_DIR_ENTRY_SIZE;
    xp_put32(d + XPC_D_TAG, t[i].tag);
    xp_put32(d + XPC_D_RECORD_SIZE, t[i].record_size);
    xp_put64(d + XPC_D_OFFSET, t[i].offset);
    xp_put64(d + XPC_D_COUNT, t[i].count);
    xp_put64(d + XPC_D_HASH, XXH3_64bits(AT(i), (size_t)(t[i].count * t[i].record_size)));
  }
#undef AT
  uint8_t* f = meta + meta_size;
  xp_put64(f + XPC_F_METADATA_OFFSET, metadata_offset);
  xp_put64(f + XPC_F_METADATA_SIZE, meta_size);
  xp_put64(f + XPC_F_DIR_OFFSET, dir_offset);
  xp_put32(f + XPC_F_DIR_COUNT, (uint32_t)ntables);
  xp_put32(f + XPC_F_FOOTER_SIZE, XPC_FOOTER_SIZE);
  xp_put64(f + XPC_F_FILE_SIZE, file_size);
  xp_put64(f + XPC_F_METADATA_HASH, XXH3_64bits(meta, meta_size));
  xp_put64(f + XPC_F_DIR_HASH, XXH3_64bits(dir, ntables * XPC_DIR_ENTRY_SIZE));
  xp_put16(f + XPC_F_MAJOR, XPC_VERSION_MAJOR);
  xp_put16(f + XPC_F_MINOR, XPC_VERSION_MINOR);
  xp_put32(f + XPC_F_FLAGS, 0);
  xp_put64(f + XPC_F_CHECKSUM, XXH3_64bits(f, XPC_F_CHECKSUM));
  memcpy(f + XPC_F_MAGIC, XPC_FOOTER_MAGIC, XPC_FOOTER_MAGIC_SIZE);

  uint8_t header[XPC_HEADER_SIZE] = {0};
  memcpy(header + XPC_H_MAGIC, XPC_HEADER_MAGIC, XPC_HEADER_MAGIC_SIZE);
  xp_put16(header + XPC_H_MAJOR, XPC_VERSION_MAJOR);
  xp_put16(header + XPC_H_MINOR, XPC_VERSION_MINOR);
  xp_put32(header + XPC_H_HEADER_SIZE, XPC_HEADER_SIZE);
  xp_put32(header + XPC_H_FLAGS, 0);
  xp_put32(header + XPC_H_PAGE_ALIGNMENT, w->page_alignment);
  xp_put32(header + XPC_H_XNN_ALIGNMENT, xp_target_xnn_alignment());
  xp_put16(header + XPC_H_ARCH, xp_target_arch());
  xp_put64(header + XPC_H_DATA_OFFSET, w->data_offset);
  xp_put64(header + XPC_H_DATA_SIZE, w->data_end - w->data_offset);
  xp_put64(header + XPC_H_CHECKSUM, XXH3_64bits(header, XPC_H_CHECKSUM));

  xpack_status st = write_all(w->fd, meta, meta_size + XPC_FOOTER_SIZE, metadata_offset, w->tmp_path, err);
  if (st == XPACK_OK) st = write_all(w->fd, header, sizeof header, 0, w->tmp_path, err);
  free(meta);
  free(sorted);
  free(string_offset);
  free(families);
  free(family_rank);
  if (st != XPACK_OK) return st;
  /* A gap between the last region and the metadata would be a hole; ftruncate keeps the size exact. */
  if (ftruncate(w->fd, (off_t)file_size) != 0 || fsync(w->fd) != 0) {
    return xpack_fail(err, XPACK_ERR_IO, "%s: cannot sync the temporary file: %s", path, strerror(errno));
  }
  if (rename(w->tmp_path, w->out_path) != 0) {
    return xpack_fail(err, XPACK_ERR_IO, "%s: cannot rename the temporary file into place: %s", path,
                      strerror(errno));
  }
  free(w->tmp_path);
  w->tmp_path = NULL; /* renamed: nothing to unlink any more */
  char* dir_copy = strdup(w->out_path);
  if (dir_copy != NULL) {
    int dfd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      fsync(dfd); /* makes the rename itself durable */
      close(dfd);
    }
    free(dir_copy);
  }
  return XPACK_OK;
}
