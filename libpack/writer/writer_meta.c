/* Finishing a cache file: the writer's recorded tables turned into the metadata area (laid out and
 * sealed by cachefile/cache_write.h), the header, then the safe commit (common/safe_write.h). */
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

#include "cachefile/cache_write.h"
#include "common/error.h"
#include "common/target.h"
#include "loader/xnn_compat.h"
#include "writer/writer_internal.h"
#include "xpc_format.h"

static _Thread_local const xpack_writer* sort_writer;

static int compare_strings(uint32_t a, uint32_t b) {
  if (a == b) return 0;
  if (a == XPC_NONE) return -1;
  if (b == XPC_NONE) return 1;
  const xp_writer_string* x = &sort_writer->strings[a];
  const xp_writer_string* y = &sort_writer->strings[b];
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->text, y->text, n);
  if (c != 0) return c;
  return x->len < y->len ? -1 : x->len > y->len;
}

/* Families in name order, for the same reason as entries. */
static int compare_families(const void* pa, const void* pb) {
  return compare_strings(((const xp_writer_family*)pa)->name, ((const xp_writer_family*)pb)->name);
}

/* Total order, so that the file does not depend on the order XNNPACK packed things in. */
static int compare_entries(const void* pa, const void* pb) {
  const xp_writer_entry* a = pa;
  const xp_writer_entry* b = pb;
  if (a->key_hash != b->key_hash) return a->key_hash < b->key_hash ? -1 : 1;
  if (a->seed != b->seed) return a->seed < b->seed ? -1 : 1;
  int c = compare_strings(a->kernel, b->kernel);
  return c != 0 ? c : compare_strings(a->bias, b->bias);
}

/* The metadata area and the header, from the scratch arrays xp_writer_write_metadata allocates:
 * string_offset (string_count, zeroed), sorted (entry_count), families and family_rank (family_count), and
 * string_order (xp_writer_string_order). */
static xpack_status write_metadata(xpack_writer* w, uint64_t* string_offset, xp_writer_entry* sorted,
                                   xp_writer_family* families, uint32_t* family_rank, const uint32_t* string_order,
                                   uint64_t* file_size, xpack_error* err) {
  const char* path = w->out_path;
  /* String offsets inside STRS (u32 length, bytes, NUL), laid out in ticket order (writer_order.c), not
   * interning order, which depends on thread timing. */
  uint64_t strings_size = 0;
  for (size_t k = 0; k < w->string_count; k++) {
    const uint32_t i = string_order[k];
    string_offset[i] = strings_size;
    strings_size += xp_string_size(w->strings[i].len);
  }
  const size_t build_id_size = xnn_experimental_get_build_identifier_size();
  /* family_rank[i]: the FAMI index of w->families[i] once sorted by name. */
  if (w->family_count > 0) memcpy(families, w->families, w->family_count * sizeof *families); /* NULL when 0 */
  sort_writer = w;
  qsort(families, w->family_count, sizeof *families, compare_families);
  for (size_t i = 0; i < w->family_count; i++) {
    for (size_t k = 0; k < w->family_count; k++) {
      if (families[k].name == w->families[i].name) family_rank[i] = (uint32_t)k;
    }
  }

  xp_table_out tables[] = {
      {XPC_TAG_REGIONS, XPC_REGION_SIZE, w->region_count, 0, NULL},
      {XPC_TAG_ENTRIES, XPC_ENTRY_SIZE, w->entry_count, 0, NULL},
      {XPC_TAG_STRINGS, 1, strings_size, 0, NULL},
      {XPC_TAG_PROVENANCE, XPC_PROVENANCE_SIZE, w->input_count, 0, NULL},
      {XPC_TAG_BUILD_ID, 1, build_id_size, 0, NULL},
      {XPC_TAG_INFO, XPC_INFO_SIZE, w->info_count, 0, NULL},
      {XPC_TAG_FAMILIES, XPC_FAMILY_SIZE, w->family_count, 0, NULL},
  };
  xp_metadata_out m;
  xpack_status st = xp_metadata_begin(&m, tables, sizeof tables / sizeof tables[0], w->data_end, path, err);
  if (st != XPACK_OK) return st;
  uint8_t* regions = xp_metadata_table(&m, XPC_TAG_REGIONS);
  for (size_t i = 0; i < w->region_count; i++) {
    const xp_writer_region* r = &w->regions[i];
    xp_put_region(regions + i * XPC_REGION_SIZE, &(xp_region){r->offset, r->size, r->size, r->hash64});
  }

  if (w->entry_count > 0) memcpy(sorted, w->entries, w->entry_count * sizeof *sorted); /* NULL when 0 */
  sort_writer = w;
  qsort(sorted, w->entry_count, sizeof *sorted, compare_entries);
  uint8_t* entries = xp_metadata_table(&m, XPC_TAG_ENTRIES);
  for (size_t i = 0; i < w->entry_count; i++) {
    const xp_writer_entry* s = &sorted[i];
    const xp_entry e = {s->key_hash, s->seed, (uint32_t)string_offset[s->kernel],
                         s->bias == XPC_NONE ? XPC_NONE : (uint32_t)string_offset[s->bias], s->region,
                         family_rank[s->family], s->flags, 0};
    xp_put_entry(entries + i * XPC_ENTRY_SIZE, &e);
  }
  xp_metadata_put_entry_checks(&m);
  uint8_t* strings = xp_metadata_table(&m, XPC_TAG_STRINGS);
  for (size_t i = 0; i < w->string_count; i++) {
    xp_put_string(strings + string_offset[i], w->strings[i].text, w->strings[i].len);
  }
  uint8_t* provenance = xp_metadata_table(&m, XPC_TAG_PROVENANCE);
  for (size_t i = 0; i < w->input_count; i++) {
    const xp_writer_input* in = &w->inputs[i];
    const xp_provenance p = {(uint32_t)string_offset[in->name], in->kind, in->file_size, in->file_hash,
                              in->program_size, in->program_hash};
    xp_put_provenance(provenance + i * XPC_PROVENANCE_SIZE, &p);
  }
  memcpy(xp_metadata_table(&m, XPC_TAG_BUILD_ID), xnn_experimental_get_build_identifier_data(), build_id_size);
  uint8_t* info = xp_metadata_table(&m, XPC_TAG_INFO);
  for (size_t i = 0; i < w->info_count; i++) {
    xp_put_info(info + i * XPC_INFO_SIZE, (uint32_t)string_offset[w->info[2 * i]],
                (uint32_t)string_offset[w->info[2 * i + 1]]);
  }
  uint8_t* fami = xp_metadata_table(&m, XPC_TAG_FAMILIES);
  for (size_t i = 0; i < w->family_count; i++) {
    const xp_family f = {(uint32_t)string_offset[families[i].name], 0, families[i].probe_hash, families[i].probe_keys};
    xp_put_family(fami + i * XPC_FAMILY_SIZE, &f);
  }
  xp_metadata_seal(&m, XPC_VERSION_MAJOR, XPC_VERSION_MINOR, 0);

  uint8_t header[XPC_HEADER_SIZE] = {0};
  const xp_header_fields fields = {XPC_VERSION_MAJOR, XPC_VERSION_MINOR, 0, w->page_alignment,
                                    xp_xnn_alignment(), xp_target_arch(), w->data_offset,
                                    w->data_end - w->data_offset};
  xp_header_put(header, &fields);

  st = xp_safe_write_at(&w->file, m.tail, m.tail_size, m.metadata_offset, err);
  if (st == XPACK_OK) st = xp_safe_write_at(&w->file, header, sizeof header, 0, err);
  *file_size = m.file_size;
  xp_metadata_free(&m);
  /* A gap between the last region and the metadata would be a hole; the commit's truncate keeps the size
   * exact. */
  return st;
}

xpack_status xp_writer_write_metadata(xpack_writer* w, uint64_t* file_size, xpack_error* err) {
  uint64_t* string_offset = calloc(w->string_count + 1, sizeof *string_offset);
  xp_writer_entry* sorted = malloc((w->entry_count + 1) * sizeof *sorted);
  xp_writer_family* families = malloc((w->family_count + 1) * sizeof *families);
  uint32_t* family_rank = malloc((w->family_count + 1) * sizeof *family_rank);
  uint32_t* string_order = xp_writer_string_order(w);
  const xpack_status st =
      string_offset && sorted && families && family_rank && string_order
          ? write_metadata(w, string_offset, sorted, families, family_rank, string_order, file_size, err)
          : xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory writing the index", w->out_path);
  free(string_order);
  free(family_rank);
  free(families);
  free(sorted);
  free(string_offset);
  return st;
}
