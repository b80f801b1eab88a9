/* xpack_export_executorch: a verified xpack cache rewritten as ExecuTorch's file-backed packed-weights cache.
 * ExecuTorch decides the index layout and the names (export_executorch.h); xpack decides the alignment of
 * the data (its own rules, docs/FORMAT.md section 4) and writes atomically. */
#include "export/export_executorch.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cachefile/cache_view.h"
#include "common/error.h"
#include "common/file_map.h"
#include "common/le.h"
#include "common/temp_files.h"
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
  const xpc_view* view;
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

/* Names one entry: kernel name followed by bias name, as ExecuTorch's look-up builds it. */
static xpack_status name_item(const xpc_view* v, const char* path, uint64_t index, export_item* it,
                              xpack_error* err) {
  xpc_entry e;
  xpc_view_entry(v, index, &e);
  it->entry = index;
  it->seed = e.seed;
  it->region = e.region;
  const char *kernel, *bias = NULL;
  uint32_t kernel_len, bias_len = 0;
  if (xpc_view_string(v, e.kernel, &kernel, &kernel_len) != 0 ||
      (e.bias != XPC_NONE && xpc_view_string(v, e.bias, &bias, &bias_len) != 0)) {
    return xpack_fail(err, XPACK_ERR_CORRUPT, "%s: entry %llu: identity offset is not a string of STRS", path,
                      (unsigned long long)index);
  }
  if (e.region >= v->regions.count) {
    return xpack_fail(err, XPACK_ERR_CORRUPT, "%s: entry %llu: region index %u, the file has %llu regions", path,
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
    return xpack_fail(err, XPACK_ERR_UNSUPPORTED, "%s: entry %llu: a name of %llu bytes does not fit ExecuTorch's index",
                      path, (unsigned long long)index, (unsigned long long)kernel_name_len + bias_name_len);
  }
  it->name_len = kernel_name_len + bias_name_len;
  it->name = malloc(it->name_len + 1);
  if (it->name == NULL) return xpack_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", path);
  memcpy(it->name, kernel, kernel_name_len);
  if (bias_name_len) memcpy(it->name + kernel_name_len, bias, bias_name_len);
  it->name[it->name_len] = 0;
  it->module_path = kernel_kind == XP_ET_NAME_MODULE_PATH || bias_kind == XP_ET_NAME_MODULE_PATH;
  it->outcome = XPACK_EXPORT_WRITTEN;
  return XPACK_OK;
}

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* ExecuTorch keeps one record per name: a name shared by entries of other seeds or other bytes is ambiguous
 * and none of them is exported; entries equal in name, seed and region become one record. Then places each
 * region a written record points at, by xpack's own alignment rules. */
static xpack_status plan_export(export_plan* p, const char* path, xpack_error* err) {
  const xpc_view* v = p->view;
  const uint64_t n = v->entries.count;
  p->items = calloc(n ? n : 1, sizeof *p->items);
  p->named = calloc(n ? n : 1, sizeof *p->named);
  p->records = calloc(n ? n : 1, sizeof *p->records);
  p->region_out_offset = malloc((v->regions.count ? v->regions.count : 1) * sizeof *p->region_out_offset);
  if (!p->items || !p->named || !p->records || !p->region_out_offset) {
    return xpack_fail(err, XPACK_ERR_NOMEM, "%s: out of memory for %llu entries", path, (unsigned long long)n);
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
    return xpack_fail(err, XPACK_ERR_UNSUPPORTED, "%s: %llu records do not fit ExecuTorch's u32 record count", path,
                      (unsigned long long)p->record_count);
  }

  for (uint64_t r = 0; r < v->regions.count; r++) p->region_out_offset[r] = UINT64_MAX;
  for (uint64_t k = 0; k < p->record_count; k++) p->region_out_offset[p->records[k]->region] = 0;
  const uint64_t small_alignment = v->xnn_alignment > XPWC_MIN_ALIGNMENT ? v->xnn_alignment : XPWC_MIN_ALIGNMENT;
  uint64_t cursor = 0;
  for (uint64_t r = 0; r < v->regions.count; r++) {
    if (p->region_out_offset[r] == UINT64_MAX) continue;
    xpc_region region;
    xpc_view_region(v, r, &region);
    if (!xpc_region_is_sound(v, &region)) {
      return xpack_fail(err, XPACK_ERR_CORRUPT, "%s: region %llu at offset %llu lies outside the data area", path,
                        (unsigned long long)r, (unsigned long long)region.offset);
    }
    cursor = align_up(cursor, region.size >= v->page_alignment ? v->page_alignment : small_alignment);
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

static xpack_status write_all(int fd, const void* data, size_t n, const char* out_path, xpack_error* err) {
  const uint8_t* p = data;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      return xpack_fail(err, XPACK_ERR_IO, "%s: cannot write the temporary file: %s", out_path,
                        w < 0 ? strerror(errno) : "no progress");
    }
    p += w;
    n -= (size_t)w;
  }
  return XPACK_OK;
}

static xpack_status write_zeros(int fd, uint64_t n, const char* out_path, xpack_error* err) {
  static const uint8_t kZeros[4096];
  while (n > 0) {
    size_t chunk = n < sizeof kZeros ? (size_t)n : sizeof kZeros;
    xpack_status st = write_all(fd, kZeros, chunk, out_path, err);
    if (st != XPACK_OK) return st;
    n -= chunk;
  }
  return XPACK_OK;
}

/* The packed regions at their planned offsets, then the index and the footer. */
static xpack_status write_contents(const export_plan* p, int fd, const char* out_path, xpack_error* err) {
  const xpc_view* v = p->view;
  uint64_t at = 0;
  for (uint64_t r = 0; r < v->regions.count; r++) {
    if (p->region_out_offset[r] == UINT64_MAX) continue;
    xpc_region region;
    xpc_view_region(v, r, &region);
    xpack_status st = write_zeros(fd, p->region_out_offset[r] - at, out_path, err);
    if (st == XPACK_OK) st = write_all(fd, v->base + region.offset, (size_t)region.size, out_path, err);
    if (st != XPACK_OK) return st;
    at = p->region_out_offset[r] + region.size;
  }
  uint64_t index_size = XPWC_FOOTER_SIZE;
  for (uint64_t k = 0; k < p->record_count; k++) index_size += XPWC_RECORD_FIXED_SIZE + p->records[k]->name_len;
  uint8_t* index = malloc((size_t)index_size);
  if (index == NULL) {
    return xpack_fail(err, XPACK_ERR_NOMEM, "%s: out of memory for a %llu-byte index", out_path,
                      (unsigned long long)index_size);
  }
  uint8_t* q = index;
  for (uint64_t k = 0; k < p->record_count; k++) {
    const export_item* it = p->records[k];
    xpc_region region;
    xpc_view_region(v, it->region, &region);
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
  xpack_status st = write_all(fd, index, (size_t)index_size, out_path, err);
  free(index);
  return st;
}

/* Temporary file beside out_path, renamed over it once complete and synced; removed on any failure. */
static xpack_status write_atomically(const export_plan* p, const char* out_path, xpack_error* err) {
  size_t n = strlen(out_path) + 32;
  char* tmp = malloc(n);
  char* dir_copy = strdup(out_path);
  char* base_copy = strdup(out_path);
  xpack_status st = XPACK_OK;
  if (!tmp || !dir_copy || !base_copy) {
    st = xpack_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", out_path);
    goto done;
  }
  snprintf(tmp, n, "%s/.%s.XXXXXX", dirname(dir_copy), basename(base_copy));
  int fd = xp_temp_create(tmp); /* locked while written: a killed export's leftover is cleaned up later */
  if (fd < 0) {
    st = xpack_fail(err, XPACK_ERR_IO, "%s: cannot create a temporary file beside it: %s", out_path, strerror(errno));
    goto done;
  }
  fchmod(fd, 0644);
  st = write_contents(p, fd, out_path, err);
  if (st == XPACK_OK && fsync(fd) != 0) {
    st = xpack_fail(err, XPACK_ERR_IO, "%s: cannot sync the temporary file: %s", out_path, strerror(errno));
  }
  if (close(fd) != 0 && st == XPACK_OK) {
    st = xpack_fail(err, XPACK_ERR_IO, "%s: cannot close the temporary file: %s", out_path, strerror(errno));
  }
  if (st == XPACK_OK && rename(tmp, out_path) != 0) {
    st = xpack_fail(err, XPACK_ERR_IO, "%s: cannot rename the temporary file into place: %s", out_path, strerror(errno));
  }
  if (st != XPACK_OK) {
    unlink(tmp);
    goto done;
  }
  free(dir_copy);
  dir_copy = strdup(out_path);
  if (dir_copy != NULL) {
    int dfd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      fsync(dfd); /* makes the rename itself durable */
      close(dfd);
    }
  }
done:
  free(tmp);
  free(dir_copy);
  free(base_copy);
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
    return xpack_fail(err, XPACK_ERR_ARG, "xpack_export_executorch: NULL path");
  }
  xp_file_map map;
  xpack_status st = xp_map_file(cache_path, &map, err);
  if (st != XPACK_OK) return st;
  static const uint8_t kEmpty[1];
  xpc_view view;
  st = xpc_view_open(&view, map.data ? map.data : kEmpty, map.size, cache_path, 0, err);
  if (st == XPACK_OK) {
    /* Every byte of the output comes from the cache: export nothing that verify would not pass. */
    first_problem problem = {{0}, 0};
    uint64_t problems = 0;
    st = xpack_verify_file(cache_path, keep_first_problem, &problem, &problems, err);
    if (st == XPACK_OK && problems > 0) {
      st = xpack_fail(err, XPACK_ERR_CORRUPT, "%s: damaged, nothing exported: %s (%llu problem%s; `xpack verify %s` lists them)",
                      cache_path, problem.text, (unsigned long long)problems, problems == 1 ? "" : "s", cache_path);
    }
  }
  export_plan plan;
  memset(&plan, 0, sizeof plan);
  plan.view = &view;
  if (st == XPACK_OK) st = plan_export(&plan, cache_path, err);
  if (st == XPACK_OK && plan.record_count > 0) {
    st = write_atomically(&plan, out_path, err);
    if (st == XPACK_OK) {
      plan.stats.file_size = plan.index_start + XPWC_FOOTER_SIZE;
      for (uint64_t k = 0; k < plan.record_count; k++) {
        plan.stats.file_size += XPWC_RECORD_FIXED_SIZE + plan.records[k]->name_len;
      }
    }
  }
  if (st == XPACK_OK) {
    if (fn) {
      for (uint64_t i = 0; i < view.entries.count; i++) {
        const export_item* it = &plan.items[i];
        fn(context, i, it->name, it->name_len, it->outcome);
      }
    }
    if (stats) *stats = plan.stats;
  }
  plan_free(&plan);
  xp_unmap_file(&map);
  return st;
}
