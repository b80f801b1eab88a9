/* .ptd reader: FlatTensor files (FT01 identifier, FH01 header) in either layout.
 * Both layouts share the identifier, so the layout is decided by which one validates: the early
 * layout has a fourth root field (segments at id3), which the 2025-06 layout never writes.
 * Between 2025-03 and 2025-06 the early layout also carried named_data (NamedData{key, segment_index})
 * appended as a fifth root field; ExecuTorch 0.6 put delegate weights (XNNPACK's) there, with no tensors. */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "et/et_internal.h"
#include "et/flatbuf.h"
#include "common/le.h"

#define FH01_MIN_LENGTH 40

enum {
  FT_VERSION = 0,
  /* 2025-06 layout */
  FT_SEGMENTS = 1,
  FT_NAMED_DATA = 2,
  NAMED_KEY = 0,
  NAMED_SEGMENT_INDEX = 1,
  /* early-2025 layout */
  FT_EARLY_TENSOR_ALIGNMENT = 1,
  FT_EARLY_TENSORS = 2,
  FT_EARLY_SEGMENTS = 3,
  FT_EARLY_NAMED_DATA = 4, /* 2025-03 to 2025-06 only */
  TM_NAME = 0,
  TM_SCALAR_TYPE = 1,
  TM_SIZES = 2,
  TM_SEGMENT_INDEX = 4,
  TM_OFFSET = 5,
  SEGMENT_OFFSET = 0,
  SEGMENT_SIZE = 1,
};

typedef struct segment_range {
  uint64_t offset; /* absolute */
  uint64_t size;
} segment_range;

/* Bytes per element of ExecuTorch's ScalarType, 0 when unknown or sub-byte. */
static size_t scalar_type_size(int8_t t) {
  switch (t) {
    case 0: case 1: case 11: case 12: case 13: case 16: case 17: case 18: case 19: case 20: case 21: case 23: case 24:
    case 25: case 26:
      return 1; /* byte, char, bool, qint8, quint8, packed 4x2/2x4 (one byte per element), bits1x8 to bits8, float8s */
    case 2: case 5: case 15: case 22: case 27:
      return 2; /* short, half, bfloat16, bits16, uint16 */
    case 3: case 6: case 8: case 14: case 28:
      return 4; /* int, float, complex half, qint32, uint32 */
    case 4: case 7: case 9: case 29:
      return 8; /* long, double, complex float, uint64 */
    case 10:
      return 16; /* complex double */
    default:
      return 0;
  }
}

static xpack_status read_segment_table(xpack_et_ptd* p, xp_fb* fb, const xp_fb_table* root, unsigned id,
                                       segment_range** out, size_t* count) {
  *out = NULL;
  *count = 0;
  xp_fb_vec v;
  xp_fb_vector(root, id, 4, "segments", &v);
  if (xp_fb_failed(fb) || v.count == 0) return fb->status;
  if (!xp_fb_charge(fb, (uint64_t)v.count * 4, "", "segments")) return fb->status;
  segment_range* r = calloc(v.count, sizeof *r);
  if (!r) return xp_fb_fail(fb, XPACK_ERR_NOMEM, "", "segments", "out of memory");
  uint64_t base = p->info.segment_base_offset;
  uint64_t room = p->info.segment_data_size;
  for (uint32_t i = 0; i < v.count; i++) {
    xp_fb_table s;
    xp_fb_vec_table(&v, i, &s);
    uint64_t off = xp_fb_u64(&s, SEGMENT_OFFSET, 0, "offset");
    uint64_t sz = xp_fb_u64(&s, SEGMENT_SIZE, 0, "size");
    if (xp_fb_failed(fb)) break;
    if (off > room || sz > room - off) {
      xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, s.path, NULL,
                 "segment [%llu, +%llu) ends past the %llu segment bytes after segment_base_offset %llu",
                 (unsigned long long)off, (unsigned long long)sz, (unsigned long long)room,
                 (unsigned long long)base);
      break;
    }
    r[i].offset = base + off;
    r[i].size = sz;
  }
  if (xp_fb_failed(fb)) {
    free(r);
    return fb->status;
  }
  *out = r;
  *count = v.count;
  return XPACK_OK;
}

/* Fills entries[0, v->count) from a named_data vector: each entry is a whole segment. */
static void read_named_entries(xpack_et_ptd* p, xp_fb* fb, const xp_fb_vec* v, const segment_range* segs, size_t nseg,
                               xpack_et_ptd_entry* entries) {
  for (uint32_t i = 0; i < v->count && !xp_fb_failed(fb); i++) {
    xp_fb_table t;
    xp_fb_vec_table(v, i, &t);
    uint32_t len = 0;
    const char* key = xp_fb_str(&t, NAMED_KEY, "key", &len);
    uint32_t seg = xp_fb_u32(&t, NAMED_SEGMENT_INDEX, 0, "segment_index");
    /* Keys are sorted and compared whole: one long key shared by every entry would cost entries x length. */
    if (key) xp_fb_charge(fb, len, t.path, "key");
    if (xp_fb_failed(fb)) break;
    if (!key) {
      xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, t.path, "key", "missing");
    } else if (seg >= nseg) {
      xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, t.path, "segment_index", "%u but the file has %zu segments", (unsigned)seg,
                 nseg);
    } else {
      xpack_et_ptd_entry* e = &entries[i];
      e->key = key;
      e->key_len = len;
      e->segment_index = seg;
      e->data = p->map.data + segs[seg].offset;
      e->size = (size_t)segs[seg].size;
      e->scalar_type = -1;
    }
  }
}

static xpack_status parse_named_layout(xpack_et_ptd* p, xp_fb* fb, const xp_fb_table* root) {
  segment_range* segs;
  size_t nseg;
  xpack_status st = read_segment_table(p, fb, root, FT_SEGMENTS, &segs, &nseg);
  if (st != XPACK_OK) return st;
  xp_fb_vec v;
  xp_fb_vector(root, FT_NAMED_DATA, 4, "named_data", &v);
  if (v.count && xp_fb_charge(fb, (uint64_t)v.count * 4, "", "named_data")) {
    p->entries = calloc(v.count, sizeof *p->entries);
    if (!p->entries) xp_fb_fail(fb, XPACK_ERR_NOMEM, "", "named_data", "out of memory");
  }
  if (!xp_fb_failed(fb)) read_named_entries(p, fb, &v, segs, nseg, p->entries);
  free(segs);
  if (xp_fb_failed(fb)) return fb->status;
  p->info.layout = XPACK_ET_PTD_NAMED_DATA;
  p->info.segment_count = nseg;
  p->info.entry_count = v.count;
  return XPACK_OK;
}

/* numel * element size of a TensorMetadata, overflow-checked. */
static bool tensor_bytes(xp_fb* fb, const xp_fb_table* t, int8_t scalar_type, uint64_t* bytes) {
  size_t elem = scalar_type_size(scalar_type);
  if (elem == 0) {
    xp_fb_fail(fb, XPACK_ERR_UNSUPPORTED, t->path, "scalar_type", "%d is not a scalar type this xpack knows",
               (int)scalar_type);
    return false;
  }
  xp_fb_vec sizes;
  xp_fb_vector(t, TM_SIZES, 4, "sizes", &sizes);
  /* Walked once per tensor: tensors sharing one long sizes vector would multiply the walk. */
  if (!xp_fb_charge(fb, (uint64_t)sizes.count * 4, t->path, "sizes")) return false;
  uint64_t n = elem;
  for (uint32_t i = 0; i < sizes.count; i++) {
    int32_t d = (int32_t)xp_fb_vec_u32(&sizes, i);
    if (d < 0) {
      xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, t->path, "sizes", "dimension %u is negative (%d)", (unsigned)i, (int)d);
      return false;
    }
    if (d != 0 && n > UINT64_MAX / (uint64_t)d) {
      xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, t->path, "sizes", "element count overflows 64 bits");
      return false;
    }
    n *= (uint64_t)d;
  }
  *bytes = n;
  return true;
}

static xpack_status parse_tensor_layout(xpack_et_ptd* p, xp_fb* fb, const xp_fb_table* root) {
  segment_range* segs;
  size_t nseg;
  xpack_status st = read_segment_table(p, fb, root, FT_EARLY_SEGMENTS, &segs, &nseg);
  if (st != XPACK_OK) return st;
  (void)xp_fb_u32(root, FT_EARLY_TENSOR_ALIGNMENT, 0, "tensor_alignment");
  xp_fb_vec v, named;
  xp_fb_vector(root, FT_EARLY_TENSORS, 4, "tensors", &v);
  xp_fb_vector(root, FT_EARLY_NAMED_DATA, 4, "named_data", &named);
  /* Tensors first, then named data: both are looked up by key alike, and keys stay unique across them. */
  const size_t total = (size_t)v.count + named.count;
  if (total && xp_fb_charge(fb, (uint64_t)total * 4, "", "tensors")) {
    p->entries = calloc(total, sizeof *p->entries);
    if (!p->entries) xp_fb_fail(fb, XPACK_ERR_NOMEM, "", "tensors", "out of memory");
  }
  for (uint32_t i = 0; i < v.count && !xp_fb_failed(fb); i++) {
    xp_fb_table t;
    xp_fb_vec_table(&v, i, &t);
    uint32_t len = 0;
    const char* key = xp_fb_str(&t, TM_NAME, "fully_qualified_name", &len);
    int8_t type = xp_fb_i8(&t, TM_SCALAR_TYPE, 0, "scalar_type");
    uint32_t seg = xp_fb_u32(&t, TM_SEGMENT_INDEX, 0, "segment_index");
    uint64_t off = xp_fb_u64(&t, TM_OFFSET, 0, "offset");
    uint64_t bytes = 0;
    if (key) xp_fb_charge(fb, len, t.path, "fully_qualified_name"); /* sorted and compared whole, as keys */
    if (xp_fb_failed(fb) || !tensor_bytes(fb, &t, type, &bytes)) break;
    if (!key) {
      xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, t.path, "fully_qualified_name", "missing");
    } else if (seg >= nseg) {
      xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, t.path, "segment_index", "%u but the file has %zu segments", (unsigned)seg,
                 nseg);
    } else if (off > segs[seg].size || bytes > segs[seg].size - off) {
      xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, t.path, "offset",
                 "%llu + %llu tensor bytes run past segment %u of %llu bytes", (unsigned long long)off,
                 (unsigned long long)bytes, (unsigned)seg, (unsigned long long)segs[seg].size);
    } else {
      xpack_et_ptd_entry* e = &p->entries[i];
      e->key = key;
      e->key_len = len;
      e->segment_index = seg;
      e->data = p->map.data + segs[seg].offset + off;
      e->size = (size_t)bytes;
      e->scalar_type = type;
    }
  }
  if (!xp_fb_failed(fb) && named.count) read_named_entries(p, fb, &named, segs, nseg, p->entries + v.count);
  free(segs);
  if (xp_fb_failed(fb)) return fb->status;
  p->info.layout = XPACK_ET_PTD_TENSORS;
  p->info.segment_count = nseg;
  p->info.entry_count = total;
  return XPACK_OK;
}

static xpack_status read_fh01(xpack_et_ptd* p, size_t* region, xpack_error* err) {
  const uint8_t* d = p->map.data;
  size_t size = p->map.size;
  if (size < 8 || memcmp(d + 4, "FT01", 4) != 0) {
    if (size >= 4 && memcmp(d, "PK\x03\x04", 4) == 0) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: a ZIP archive, not an ExecuTorch .ptd (expected \"FT01\" at bytes 4..8)",
                     p->name);
    }
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: not an ExecuTorch .ptd: expected identifier \"FT01\" at bytes 4..8",
                   p->name);
  }
  if (size < 16 || memcmp(d + 8, "FH01", 4) != 0) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: expected the \"FH01\" header magic at bytes 8..12", p->name);
  }
  uint32_t len = xp_le32(d + 12);
  if (len < FH01_MIN_LENGTH) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: FH01 header length %u at byte 12; expected at least %d", p->name,
                   (unsigned)len, FH01_MIN_LENGTH);
  }
  if ((uint64_t)len + 8 > size) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: FH01 header length %u at byte 12 runs past the %zu-byte file (the "
                   "header starts at byte 8)", p->name, (unsigned)len, size);
  }
  uint64_t fb_off = xp_le64(d + 16), fb_size = xp_le64(d + 24);
  uint64_t seg_base = xp_le64(d + 32), seg_size = xp_le64(d + 40);
  if (fb_off > size || fb_size > size - fb_off) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: FH01 flatbuffer [%llu, +%llu) runs past the %zu-byte file", p->name,
                   (unsigned long long)fb_off, (unsigned long long)fb_size, size);
  }
  if (seg_base > size || seg_size > size - seg_base) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: FH01 segment data [%llu, +%llu) runs past the %zu-byte file (truncated?)", p->name,
                   (unsigned long long)seg_base, (unsigned long long)seg_size, size);
  }
  p->info.segment_base_offset = seg_base;
  p->info.segment_data_size = seg_size;
  /* The header sits inside the flatbuffer's first bytes (the root offset skips it), so the
   * flatbuffer region is everything up to the end of its data. */
  *region = (size_t)(fb_off + fb_size);
  return XPACK_OK;
}

typedef xpack_status (*layout_parser)(xpack_et_ptd*, xp_fb*, const xp_fb_table*);

/* Runs one layout's parser; on failure resets what it allocated so the other layout can be tried. */
static xpack_status try_layout(xpack_et_ptd* p, size_t region, layout_parser parse, xpack_error* err) {
  xp_fb fb;
  xp_fb_init(&fb, p->map.data, region, p->name, err);
  xp_fb_table root;
  if (xp_fb_root(&fb, &root)) {
    p->info.version = xp_fb_u32(&root, FT_VERSION, 0, "version");
    if (!xp_fb_failed(&fb)) parse(p, &fb, &root);
  }
  if (xp_fb_failed(&fb)) {
    free(p->entries);
    p->entries = NULL;
    p->info.entry_count = 0;
  }
  return fb.status;
}

static xpack_status parse_ptd(xpack_et_ptd* p, xpack_error* err) {
  p->info.name = p->name;
  p->info.file_size = p->map.size;
  size_t region = 0;
  xpack_status st = read_fh01(p, &region, err);
  if (st != XPACK_OK) return st;

  xp_fb probe;
  xp_fb_init(&probe, p->map.data, region, p->name, NULL);
  xp_fb_table root;
  bool early_first = xp_fb_root(&probe, &root) && xp_fb_has(&root, FT_EARLY_SEGMENTS);
  layout_parser first = early_first ? parse_tensor_layout : parse_named_layout;
  layout_parser second = early_first ? parse_named_layout : parse_tensor_layout;
  xpack_error first_err;
  st = try_layout(p, region, first, &first_err);
  if (st == XPACK_OK || st == XPACK_ERR_NOMEM) {
    if (st != XPACK_OK && err) *err = first_err;
    return st;
  }
  if (try_layout(p, region, second, NULL) == XPACK_OK) return XPACK_OK;
  if (err) *err = first_err; /* report against the layout the file most looks like */
  return st;
}

static xpack_status check_unique_keys(xpack_et_ptd* p, xpack_error* err) {
  size_t n = p->info.entry_count;
  if (n == 0) return XPACK_OK;
  p->sorted = calloc(n, sizeof *p->sorted);
  if (!p->sorted) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", p->name);
  xp_et_sort_keys(p->sorted, n, p->entries, sizeof *p->entries, offsetof(xpack_et_ptd_entry, key),
                  offsetof(xpack_et_ptd_entry, key_len));
  for (size_t i = 1; i < n; i++) {
    const xpack_et_ptd_entry* a = &p->entries[p->sorted[i - 1]];
    const xpack_et_ptd_entry* b = &p->entries[p->sorted[i]];
    if (xp_et_key_compare(a->key, a->key_len, b->key, b->key_len) == 0) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: key \"%.*s\" appears twice (entries %zu and %zu)", p->name,
                     (int)(a->key_len > 200 ? 200 : a->key_len), a->key, p->sorted[i - 1], p->sorted[i]);
    }
  }
  return XPACK_OK;
}

static xpack_status finish_open(xpack_et_ptd* p, xpack_et_ptd** out, xpack_error* err) {
  xpack_status st = parse_ptd(p, err);
  if (st == XPACK_OK) st = check_unique_keys(p, err);
  if (st != XPACK_OK) {
    xpack_et_ptd_close(p);
    return st;
  }
  p->info.entries = p->entries;
  *out = p;
  return XPACK_OK;
}

xpack_status xpack_et_ptd_open(const char* path, xpack_et_ptd** out, xpack_error* err) {
  return xpack_et_ptd_open_flags(path, 0, out, err);
}

xpack_status xpack_et_ptd_open_flags(const char* path, unsigned flags, xpack_et_ptd** out, xpack_error* err) {
  if (out != NULL) *out = NULL; /* on every failure, a caller error included */
  if (!path || !out || (flags & ~(unsigned)XPACK_ET_OPEN_WEIGHTS_ON_DEMAND) != 0) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_et_ptd_open: NULL path or out, or unknown flags");
  }
  xpack_et_ptd* p = calloc(1, sizeof *p);
  if (!p || !(p->name = xp_et_strdup(path))) {
    free(p);
    return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", path);
  }
  xp_et_memo_init(&p->hashes);
  xpack_status st = xp_et_map_file(path, &p->map, err);
  if (st != XPACK_OK) {
    xpack_et_ptd_close(p);
    return st;
  }
  if ((flags & XPACK_ET_OPEN_WEIGHTS_ON_DEMAND) != 0 && xp_et_worth_reading_on_demand(&p->map)) {
    p->map.read_on_demand = 1;
    xp_et_ptd_advise_before_parse(&p->map);
  }
  return finish_open(p, out, err);
}

xpack_status xpack_et_ptd_open_memory(const void* data, size_t size, const char* name, xpack_et_ptd** out,
                                      xpack_error* err) {
  if (out != NULL) *out = NULL; /* on every failure, a caller error included */
  if (!out || (!data && size)) return xp_fail(err, XPACK_ERR_ARG, "xpack_et_ptd_open_memory: NULL data or out");
  xpack_et_ptd* p = calloc(1, sizeof *p);
  if (!p || !(p->name = xp_et_strdup(name ? name : "(memory)"))) {
    free(p);
    return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
  }
  xp_et_memo_init(&p->hashes);
  p->map.data = data;
  p->map.size = size;
  return finish_open(p, out, err);
}

void xpack_et_ptd_close(xpack_et_ptd* p) {
  if (!p) return;
  free(p->entries);
  free(p->sorted);
  xp_et_memo_free(&p->hashes);
  xp_et_map_release(&p->map);
  free(p->name);
  free(p);
}

const xpack_et_ptd_info* xpack_et_ptd_get_info(const xpack_et_ptd* p) { return p ? &p->info : NULL; }

bool xpack_et_ptd_was_named(const xpack_et_ptd* p) {
  return p != NULL && atomic_load_explicit(&((xpack_et_ptd*)p)->named, memory_order_relaxed) != 0;
}

const uint8_t* xpack_et_ptd_bytes(const xpack_et_ptd* p, size_t* size) {
  if (size) *size = p ? p->map.size : 0;
  return p ? p->map.data : NULL;
}

const xpack_et_ptd_entry* xpack_et_ptd_find(const xpack_et_ptd* p, const char* key, size_t key_len) {
  if (!p || !key || p->info.entry_count == 0) return NULL;
  size_t i = xp_et_find_key(p->sorted, p->info.entry_count, p->entries, sizeof *p->entries,
                            offsetof(xpack_et_ptd_entry, key), offsetof(xpack_et_ptd_entry, key_len), key, key_len);
  return i == SIZE_MAX ? NULL : &p->entries[i];
}
