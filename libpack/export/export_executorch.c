/* xpack_export_executorch: a verified xpack cache rewritten as ExecuTorch's file-backed packed-weights cache.
 * ExecuTorch decides the index layout and the names (export_executorch.h); xpack decides the alignment of
 * the data (its own rules, docs/FORMAT.md section 4) and writes atomically. */
#include "export/export_executorch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachefile/cache_open.h"
#include "cachefile/region_place.h"
#include "common/error.h"
#include "common/le.h"
#include "common/output_check.h"
#include "common/safe_write.h"
#include "inspect/verify.h"
#include "xpack.h"
#include "xpc_format.h"

/* ---------------------------------------------------------------- naming */

static const char kUnnamedPrefix[] = "xpack:";
static const char kContentSeparator[] = "#xxh3-128:";
#define CONTENT_HEX_DIGITS 32

static int is_lower_hex(const char* s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  }
  return 1;
}

/* ExecuTorch's exporter names XNNPACK constants by the SHA-256 of their bytes, "scale_"-prefixed for
 * quantization scales; xpack keeps such keys verbatim (libpack/et/IDENTITY.md). */
static int is_content_key(const char* s, size_t len) {
  static const char kScale[] = "scale_";
  if (len == 64 + sizeof kScale - 1 && memcmp(s, kScale, sizeof kScale - 1) == 0) {
    s += sizeof kScale - 1;
    len -= sizeof kScale - 1;
  }
  return len == 64 && is_lower_hex(s, len);
}

xp_et_name_kind xp_et_name_of_identity(const char* id, size_t len, size_t* name_len) {
  *name_len = 0;
  /* A weight's packing suffix (xpack_et_packing_suffix) is xpack's: ExecuTorch names the bytes alone. */
  static const char kPackingSuffix[] = "|xnn:";
  const size_t packing = sizeof kPackingSuffix - 1 + CONTENT_HEX_DIGITS;
  if (len > packing && memcmp(id + len - packing, kPackingSuffix, sizeof kPackingSuffix - 1) == 0 &&
      is_lower_hex(id + len - CONTENT_HEX_DIGITS, CONTENT_HEX_DIGITS)) {
    len -= packing;
  }
  if (len >= sizeof kUnnamedPrefix - 1 && memcmp(id, kUnnamedPrefix, sizeof kUnnamedPrefix - 1) == 0) {
    return XP_ET_NAME_UNNAMED;
  }
  if (is_content_key(id, len)) {
    *name_len = len;
    return XP_ET_NAME_CONTENT_KEY;
  }
  /* key + "#xxh3-128:" + 32 hex + ":" + decimal size, read from the end so that a key may itself hold '#'. */
  size_t digits = 0;
  while (digits < len && id[len - 1 - digits] >= '0' && id[len - 1 - digits] <= '9') digits++;
  const size_t separator = sizeof kContentSeparator - 1;
  const size_t suffix = separator + CONTENT_HEX_DIGITS + 1 + digits;
  if (digits == 0 || len < suffix) return XP_ET_NAME_OTHER;
  const char* s = id + len - suffix;
  if (memcmp(s, kContentSeparator, separator) != 0 || !is_lower_hex(s + separator, CONTENT_HEX_DIGITS) ||
      s[separator + CONTENT_HEX_DIGITS] != ':') {
    return XP_ET_NAME_OTHER;
  }
  if (len == suffix) return XP_ET_NAME_OTHER; /* an empty key: ExecuTorch looks up no weight by "" */
  *name_len = len - suffix;
  return XP_ET_NAME_MODULE_PATH;
}

/* ---------------------------------------------------------------- planning */

typedef struct export_item {
  uint64_t entry;
  char* name; /* kernel name + bias name; NULL when the entry cannot be named */
  size_t name_len;
  uint32_t seed;
  uint32_t region;
  int module_path;
  xpack_export_outcome outcome;
} export_item;

typedef struct export_plan {
  const xp_view* view;
  export_item* items;         /* one per entry, in entry order */
  export_item** named;        /* the items with a name, sorted by name, seed, region */
  uint64_t named_count;
  export_item** records;      /* the first item of each exported name, in name order */
  uint64_t record_count;
  uint64_t* region_out_offset; /* per REGN index: offset in the output, UINT64_MAX when not written */
  uint64_t index_start;       /* end of the data written */
  xpack_export_stats stats;
} export_plan;

static void plan_free(export_plan* p) {
  if (p->items) {
    for (uint64_t i = 0; i < p->view->entries.count; i++) free(p->items[i].name);
  }
  free(p->items);
  free(p->named);
  free(p->records);
  free(p->region_out_offset);
}

static int compare_items(const void* a, const void* b) {
  const export_item* x = *(const export_item* const*)a;
  const export_item* y = *(const export_item* const*)b;
  size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
  int c = memcmp(x->name, y->name, n);
  if (c != 0) return c;
  if (x->name_len != y->name_len) return x->name_len < y->name_len ? -1 : 1;
  if (x->seed != y->seed) return x->seed < y->seed ? -1 : 1;
  if (x->region != y->region) return x->region < y->region ? -1 : 1;
  return x->entry < y->entry ? -1 : x->entry > y->entry;
}

/* Names one entry: kernel name followed by bias name, as ExecuTorch's look-up builds it. A name is at most its
 * identities, whose bytes over all entries xp_file_open bounds (XP_STRING_BYTES_PER_STRS_BYTE): the copies
 * and their sort stay in proportion to the file. */
static xpack_status name_item(const xp_view* v, const char* path, uint64_t index, export_item* it,
                              xpack_error* err) {
  xp_entry e;
  xp_view_entry(v, index, &e);
  it->entry = index;
  it->seed = e.seed;
  it->region = e.region;
  const char *kernel, *bias = NULL;
  uint32_t kernel_len, bias_len = 0;
  if (xp_view_string(v, e.kernel, &kernel, &kernel_len) != 0 ||
      (e.bias != XPC_NONE && xp_view_string(v, e.bias, &bias, &bias_len) != 0)) {
    return xp_fail(err, XPACK_ERR_CORRUPT, "%s: entry %llu: identity offset is not a string of STRS", path,
                   (unsigned long long)index);
  }
  if (e.region >= v->regions.count) {
    return xp_fail(err, XPACK_ERR_CORRUPT, "%s: entry %llu: region index %u, the file has %llu regions", path,
                   (unsigned long long)index, e.region, (unsigned long long)v->regions.count);
  }
  size_t kernel_name_len, bias_name_len = 0;
  xp_et_name_kind kernel_kind = xp_et_name_of_identity(kernel, kernel_len, &kernel_name_len);
  xp_et_name_kind bias_kind = bias ? xp_et_name_of_identity(bias, bias_len, &bias_name_len) : XP_ET_NAME_CONTENT_KEY;
  /* ExecuTorch never names an unnamed constant. With an unnamed bias it would key the weight by the kernel's
   * name alone, which cannot tell it from the same kernel with another bias: not exported either. */
  if (kernel_kind == XP_ET_NAME_UNNAMED || bias_kind == XP_ET_NAME_UNNAMED) {
    it->outcome = XPACK_EXPORT_SKIP_UNNAMED;
    return XPACK_OK;
  }
  if (kernel_kind == XP_ET_NAME_OTHER || bias_kind == XP_ET_NAME_OTHER) {
    it->outcome = XPACK_EXPORT_SKIP_NOT_EXECUTORCH;
    return XPACK_OK;
  }
  if ((uint64_t)kernel_name_len + bias_name_len > UINT32_MAX) {
    return xp_fail(err, XPACK_ERR_UNSUPPORTED, "%s: entry %llu: a name of %llu bytes does not fit ExecuTorch's index",
                   path, (unsigned long long)index, (unsigned long long)kernel_name_len + bias_name_len);
  }
  it->name_len = kernel_name_len + bias_name_len;
  it->name = malloc(it->name_len + 1);
  if (it->name == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", path);
  memcpy(it->name, kernel, kernel_name_len);
  if (bias_name_len) memcpy(it->name + kernel_name_len, bias, bias_name_len);
  it->name[it->name_len] = 0;
  it->module_path = kernel_kind == XP_ET_NAME_MODULE_PATH || bias_kind == XP_ET_NAME_MODULE_PATH;
  it->outcome = XPACK_EXPORT_WRITTEN;
  return XPACK_OK;
}

/* ExecuTorch keeps one record per name: a name shared by entries of other seeds or other bytes is ambiguous
 * and none of them is exported; entries equal in name, seed and region become one record. Then places each
 * region a written record points at, by xpack's own alignment rules. */
static xpack_status plan_export(export_plan* p, const char* path, xpack_error* err) {
  const xp_view* v = p->view;
  const uint64_t n = v->entries.count;
  p->items = calloc(n ? n : 1, sizeof *p->items);
  p->named = calloc(n ? n : 1, sizeof *p->named);
  p->records = calloc(n ? n : 1, sizeof *p->records);
  p->region_out_offset = malloc((v->regions.count ? v->regions.count : 1) * sizeof *p->region_out_offset);
  if (!p->items || !p->named || !p->records || !p->region_out_offset) {
    return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory for %llu entries", path, (unsigned long long)n);
  }
  for (uint64_t i = 0; i < n; i++) {
    xpack_status st = name_item(v, path, i, &p->items[i], err);
    if (st != XPACK_OK) return st;
    if (p->items[i].name) p->named[p->named_count++] = &p->items[i];
  }
  qsort(p->named, (size_t)p->named_count, sizeof *p->named, compare_items);
  for (uint64_t i = 0; i < p->named_count;) {
    uint64_t end = i + 1;
    int same = 1;
    while (end < p->named_count && p->named[end]->name_len == p->named[i]->name_len &&
           memcmp(p->named[end]->name, p->named[i]->name, p->named[i]->name_len) == 0) {
      same &= p->named[end]->seed == p->named[i]->seed && p->named[end]->region == p->named[i]->region;
      end++;
    }
    if (same) {
      p->records[p->record_count++] = p->named[i];
    } else {
      for (uint64_t k = i; k < end; k++) p->named[k]->outcome = XPACK_EXPORT_SKIP_AMBIGUOUS;
    }
    i = end;
  }
  if (p->record_count > UINT32_MAX) {
    return xp_fail(err, XPACK_ERR_UNSUPPORTED, "%s: %llu records do not fit ExecuTorch's u32 record count", path,
                   (unsigned long long)p->record_count);
  }

  for (uint64_t r = 0; r < v->regions.count; r++) p->region_out_offset[r] = UINT64_MAX;
  for (uint64_t k = 0; k < p->record_count; k++) p->region_out_offset[p->records[k]->region] = 0;
  /* The mappable form's rule, with ExecuTorch's own alignment for small regions. */
  const uint64_t small_alignment = v->xnn_alignment > XPWC_MIN_ALIGNMENT ? v->xnn_alignment : XPWC_MIN_ALIGNMENT;
  uint64_t cursor = 0;
  for (uint64_t r = 0; r < v->regions.count; r++) {
    if (p->region_out_offset[r] == UINT64_MAX) continue;
    xp_region region;
    xp_view_region(v, r, &region);
    if (!xp_region_is_sound(v, &region)) {
      return xp_fail(err, XPACK_ERR_CORRUPT, "%s: region %llu at offset %llu lies outside the data area", path,
                     (unsigned long long)r, (unsigned long long)region.offset);
    }
    cursor = xp_place_region(cursor, region.size, v->page_alignment, small_alignment);
    p->region_out_offset[r] = cursor;
    cursor += region.size;
    p->stats.regions++;
    p->stats.data_bytes += region.size;
  }
  p->index_start = cursor;

  p->stats.entries = n;
  p->stats.records = p->record_count;
  for (uint64_t i = 0; i < n; i++) {
    switch (p->items[i].outcome) {
      case XPACK_EXPORT_WRITTEN: p->stats.exported++; break;
      case XPACK_EXPORT_SKIP_UNNAMED: p->stats.skipped_unnamed++; break;
      case XPACK_EXPORT_SKIP_NOT_EXECUTORCH: p->stats.skipped_not_executorch++; break;
      case XPACK_EXPORT_SKIP_AMBIGUOUS: p->stats.skipped_ambiguous++; break;
    }
  }
  for (uint64_t k = 0; k < p->record_count; k++) p->stats.module_path_records += p->records[k]->module_path;
  return XPACK_OK;
}

/* ---------------------------------------------------------------- writing */

/* The packed regions at their planned offsets (the gaps read as zeros), then the index and the footer. */
static xpack_status write_contents(const export_plan* p, xp_safe_file* out, xpack_error* err) {
  const xp_view* v = p->view;
  for (uint64_t r = 0; r < v->regions.count; r++) {
    if (p->region_out_offset[r] == UINT64_MAX) continue;
    xp_region region;
    xp_view_region(v, r, &region);
    xpack_status st = xp_safe_write_at(out, v->base + region.offset, (size_t)region.size, p->region_out_offset[r], err);
    if (st != XPACK_OK) return st;
  }
  uint64_t index_size = XPWC_FOOTER_SIZE;
  for (uint64_t k = 0; k < p->record_count; k++) index_size += XPWC_RECORD_FIXED_SIZE + p->records[k]->name_len;
  uint8_t* index = malloc((size_t)index_size);
  if (index == NULL) {
    return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory for a %llu-byte index", out->path,
                   (unsigned long long)index_size);
  }
  uint8_t* q = index;
  for (uint64_t k = 0; k < p->record_count; k++) {
    const export_item* it = p->records[k];
    xp_region region;
    xp_view_region(v, it->region, &region);
    xp_put32(q, (uint32_t)it->name_len);
    memcpy(q + 4, it->name, it->name_len);
    q += 4 + it->name_len;
    xp_put64(q, p->region_out_offset[it->region]);
    xp_put64(q + 8, region.size);
    xp_put32(q + 16, it->seed);
    q += 20;
  }
  xp_put64(q, p->index_start);
  xp_put32(q + 8, (uint32_t)p->record_count);
  xp_put32(q + 12, XPWC_MAGIC);
  xp_put32(q + 16, XPWC_VERSION);
  xpack_status st = xp_safe_write_at(out, index, (size_t)index_size, p->index_start, err);
  free(index);
  return st;
}

/* The whole output file, replacing out_path only once complete (common/safe_write.h). */
static xpack_status write_safely(const export_plan* p, const char* out_path, uint64_t file_size, xpack_error* err) {
  xp_safe_file out;
  xpack_status st = xp_safe_create(&out, out_path, err); /* a killed export's leftover is cleaned up later */
  if (st != XPACK_OK) return st;
  st = write_contents(p, &out, err);
  if (st == XPACK_OK) return xp_safe_commit(&out, file_size, err);
  xp_safe_abort(&out);
  return st;
}

/* ---------------------------------------------------------------- the whole export */

typedef struct first_problem {
  char text[XPACK_ERROR_MESSAGE_SIZE / 2];
  int seen;
} first_problem;

static void keep_first_problem(void* context, const char* where, const char* what) {
  first_problem* f = context;
  if (f->seen++) return;
  snprintf(f->text, sizeof f->text, "%s: %s", where, what);
}

xpack_status xpack_export_executorch(const char* cache_path, const char* out_path, xpack_export_entry_fn fn,
                                     void* context, xpack_export_stats* stats, xpack_error* err) {
  if (stats) memset(stats, 0, sizeof *stats);
  if (cache_path == NULL || out_path == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_export_executorch: NULL path");
  }
  xpack_status st = xp_check_output(out_path, &cache_path, 1, err); /* before anything is read or written */
  if (st != XPACK_OK) return st;
  xp_file cache;
  st = xp_file_open(&cache, cache_path, 0, err);
  if (st != XPACK_OK) return st;
  const xp_view* view = &cache.view;
  /* Every byte of the output comes from the cache: export nothing that verify would not pass. The mapping
   * export reads is the one checked, so a file renamed into cache_path meanwhile is neither checked nor used. */
  first_problem problem = {{0}, 0};
  uint64_t problems = xp_verify_view(view, keep_first_problem, &problem);
  if (problems > 0) {
    st = xp_fail(err, XPACK_ERR_CORRUPT, "%s: damaged, nothing exported: %s (%llu problem%s; `xpack verify %s` lists them)",
                 cache_path, problem.text, (unsigned long long)problems, problems == 1 ? "" : "s", cache_path);
  }
  export_plan plan;
  memset(&plan, 0, sizeof plan);
  plan.view = view;
  if (st == XPACK_OK) st = plan_export(&plan, cache_path, err);
  if (st == XPACK_OK && plan.record_count > 0) {
    uint64_t file_size = plan.index_start + XPWC_FOOTER_SIZE;
    for (uint64_t k = 0; k < plan.record_count; k++) file_size += XPWC_RECORD_FIXED_SIZE + plan.records[k]->name_len;
    st = write_safely(&plan, out_path, file_size, err);
    if (st == XPACK_OK) plan.stats.file_size = file_size;
  }
  if (st == XPACK_OK) {
    if (fn) {
      for (uint64_t i = 0; i < view->entries.count; i++) {
        const export_item* it = &plan.items[i];
        fn(context, i, it->name, it->name_len, it->outcome);
      }
    }
    if (stats) *stats = plan.stats;
  }
  plan_free(&plan);
  xp_file_close(&cache);
  return st;
}
