/* .pte reader: the ET12 program flatbuffer, its optional eh00 extended header, methods, delegates,
 * segments and named data. Offsets come from EXECUTORCH_FORMAT.md section 1. */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "et/et_internal.h"
#include "et/flatbuf.h"
#include "common/le.h"

enum {
  PROGRAM_VERSION = 0,
  PROGRAM_EXECUTION_PLAN = 1,
  PROGRAM_CONSTANT_BUFFER = 2,
  PROGRAM_BACKEND_DELEGATE_DATA = 3,
  PROGRAM_SEGMENTS = 4,
  PROGRAM_NAMED_DATA = 7,
  PLAN_NAME = 0,
  PLAN_DELEGATES = 7,
  DELEGATE_ID = 0,
  DELEGATE_PROCESSED = 1,
  DELEGATE_COMPILE_SPECS = 2,
  REF_LOCATION = 0,
  REF_INDEX = 1,
  SPEC_KEY = 0,
  SPEC_VALUE = 1,
  SEGMENT_OFFSET = 0,
  SEGMENT_SIZE = 1,
  NAMED_KEY = 0,
  NAMED_SEGMENT_INDEX = 1,
  INLINE_DATA = 0,
  BUFFER_STORAGE = 0,
};

#define EXTENDED_HEADER_MIN 24

static const char XNNPACK_BACKEND_ID[] = "XnnpackBackend";

/* Recognizes what a non-program file is, so the message says more than "bad identifier". */
static xpack_status reject_non_program(const char* name, const uint8_t* d, size_t size, xpack_error* err) {
  if (size >= 4 && memcmp(d, "PK\x03\x04", 4) == 0) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: a ZIP archive (bytes 0..4 are \"PK\\3\\4\"; a TorchScript model?), not an ExecuTorch "
                   "program: expected the flatbuffer identifier \"ET12\" at bytes 4..8",
                      name);
  }
  if (size < 8) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: %zu bytes is too short for an ExecuTorch program (at least 8)",
                   name, size);
  }
  if (memcmp(d + 4, "ET", 2) == 0 && d[6] >= '0' && d[6] <= '9' && d[7] >= '0' && d[7] <= '9') {
    return xp_fail(err, XPACK_ERR_UNSUPPORTED,
                   "%s: program schema identifier \"%.4s\" at bytes 4..8; this xpack reads \"ET12\"", name,
                   (const char*)d + 4);
  }
  char shown[9];
  for (int i = 0; i < 4; i++) {
    uint8_t c = d[4 + i];
    shown[i] = (c >= 0x20 && c < 0x7f && c != '"') ? (char)c : '?';
  }
  shown[4] = 0;
  return xp_fail(err, XPACK_ERR_BAD_INPUT,
                 "%s: not an ExecuTorch program: expected identifier \"ET12\" at bytes 4..8, found \"%s\" "
                 "(%02x %02x %02x %02x)",
                    name, shown, d[4], d[5], d[6], d[7]);
}

/* The eh00 extended header; fills the info fields and the flatbuffer region size. */
static xpack_status read_extended_header(xpack_et_program* p, size_t* program_region, xpack_error* err) {
  const uint8_t* d = p->map.data;
  size_t size = p->map.size;
  xpack_et_program_info* info = &p->info;
  *program_region = size;
  if (size < 16 || memcmp(d + 8, "eh00", 4) != 0) return XPACK_OK;
  uint32_t len = xp_le32(d + 12);
  if (len < EXTENDED_HEADER_MIN) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: eh00 header at byte 8 has length %u; expected at least %d",
                   p->name, (unsigned)len, EXTENDED_HEADER_MIN);
  }
  if ((uint64_t)len + 8 > size) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: eh00 header of %u bytes at byte 8 runs past the %zu-byte file",
                   p->name, (unsigned)len, size);
  }
  info->extended_header_size = len;
  info->program_size = xp_le64(d + 16);
  info->segment_base_offset = xp_le64(d + 24);
  info->segment_data_size = len >= 32 ? xp_le64(d + 32) : 0;
  if (info->program_size < 8 + (uint64_t)len || info->program_size > size) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: eh00 program_size = %llu; expected between %u and the file size %zu", p->name,
                   (unsigned long long)info->program_size, (unsigned)(8 + len), size);
  }
  if (info->segment_base_offset != 0) {
    if (info->segment_base_offset < info->program_size || info->segment_base_offset > size) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT,
                     "%s: eh00 segment_base_offset = %llu; expected between program_size %llu and the file size %zu",
                     p->name, (unsigned long long)info->segment_base_offset,
                        (unsigned long long)info->program_size, size);
    }
    if (info->segment_data_size > size - info->segment_base_offset) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT,
                     "%s: eh00 says %llu segment bytes from byte %llu, but the file is %zu bytes (truncated?)",
                     p->name, (unsigned long long)info->segment_data_size,
                        (unsigned long long)info->segment_base_offset, size);
    }
  }
  *program_region = (size_t)info->program_size;
  return XPACK_OK;
}

static xpack_status read_segments(xpack_et_program* p, xp_fb* fb, const xp_fb_table* root) {
  xp_fb_vec v;
  xp_fb_vector(root, PROGRAM_SEGMENTS, 4, "segments", &v);
  if (xp_fb_failed(fb)) return fb->status;
  if (v.count == 0) return XPACK_OK;
  if (!xp_fb_charge(fb, (uint64_t)v.count * 4, "", "segments")) return fb->status;
  const xpack_et_program_info* info = &p->info;
  p->segments = calloc(v.count, sizeof *p->segments);
  if (!p->segments) return xp_fb_fail(fb, XPACK_ERR_NOMEM, "", "segments", "out of memory for %u segments", v.count);
  /* Without a segment base (no eh00, or base 0) only empty segments can exist: programs whose
   * constants are all external still list one empty constant segment. */
  uint64_t room = info->segment_base_offset ? p->map.size - info->segment_base_offset : 0;
  if (info->segment_base_offset && info->extended_header_size >= 32 && info->segment_data_size < room) {
    room = info->segment_data_size;
  }
  for (uint32_t i = 0; i < v.count; i++) {
    xp_fb_table s;
    xp_fb_vec_table(&v, i, &s);
    uint64_t off = xp_fb_u64(&s, SEGMENT_OFFSET, 0, "offset");
    uint64_t sz = xp_fb_u64(&s, SEGMENT_SIZE, 0, "size");
    if (xp_fb_failed(fb)) return fb->status;
    if (info->segment_base_offset == 0 && sz != 0) {
      return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, s.path, "size",
                        "%llu bytes, but the file has no eh00 segment_base_offset to place segments",
                        (unsigned long long)sz);
    }
    if (info->segment_base_offset == 0) continue;
    if (off > room || sz > room - off) {
      return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, s.path, NULL,
                        "segment [%llu, +%llu) relative to segment_base_offset %llu ends past the %llu segment bytes "
                        "the file holds",
                        (unsigned long long)off, (unsigned long long)sz,
                        (unsigned long long)info->segment_base_offset, (unsigned long long)room);
    }
    p->segments[i].offset = info->segment_base_offset + off;
    p->segments[i].size = sz;
  }
  p->info.segments = p->segments;
  p->info.segment_count = v.count;
  return XPACK_OK;
}

static xpack_status read_named_data(xpack_et_program* p, xp_fb* fb, const xp_fb_table* root) {
  xp_fb_vec v;
  xp_fb_vector(root, PROGRAM_NAMED_DATA, 4, "named_data", &v);
  if (xp_fb_failed(fb) || v.count == 0) return fb->status;
  if (!xp_fb_charge(fb, (uint64_t)v.count * 4, "", "named_data")) return fb->status;
  p->named = calloc(v.count, sizeof *p->named);
  p->named_sorted = calloc(v.count, sizeof *p->named_sorted);
  if (!p->named || !p->named_sorted) return xp_fb_fail(fb, XPACK_ERR_NOMEM, "", "named_data", "out of memory");
  for (uint32_t i = 0; i < v.count; i++) {
    xp_fb_table t;
    xp_fb_vec_table(&v, i, &t);
    uint32_t len = 0;
    const char* key = xp_fb_str(&t, NAMED_KEY, "key", &len);
    uint32_t seg = xp_fb_u32(&t, NAMED_SEGMENT_INDEX, 0, "segment_index");
    /* Keys are sorted and compared whole: one long key shared by every entry would cost entries x length. */
    if (key) xp_fb_charge(fb, len, t.path, "key");
    if (xp_fb_failed(fb)) return fb->status;
    if (!key) return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, t.path, "key", "missing (every named_data entry needs a key)");
    if (seg >= p->info.segment_count) {
      return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, t.path, "segment_index", "%u but the program has %zu segments",
                        (unsigned)seg, p->info.segment_count);
    }
    xpack_et_named_data* n = &p->named[i];
    n->key = key;
    n->key_len = len;
    n->segment_index = seg;
    n->data = p->segments[seg].size ? p->map.data + p->segments[seg].offset : NULL;
    n->size = (size_t)p->segments[seg].size;
  }
  p->info.named_data = p->named;
  p->info.named_data_count = v.count;
  xp_et_sort_keys(p->named_sorted, v.count, p->named, sizeof *p->named, offsetof(xpack_et_named_data, key),
                  offsetof(xpack_et_named_data, key_len));
  return XPACK_OK;
}

static xpack_status read_legacy_constants(xpack_et_program* p, xp_fb* fb, const xp_fb_table* root) {
  xp_fb_vec v;
  xp_fb_vector(root, PROGRAM_CONSTANT_BUFFER, 4, "constant_buffer", &v);
  if (xp_fb_failed(fb) || v.count == 0) return fb->status;
  if (!xp_fb_charge(fb, (uint64_t)v.count * 4, "", "constant_buffer")) return fb->status;
  p->legacy = calloc(v.count, sizeof *p->legacy);
  if (!p->legacy) return xp_fb_fail(fb, XPACK_ERR_NOMEM, "", "constant_buffer", "out of memory");
  for (uint32_t i = 0; i < v.count; i++) {
    xp_fb_table t;
    xp_fb_vec_table(&v, i, &t);
    xp_fb_vec bytes;
    xp_fb_vector(&t, BUFFER_STORAGE, 1, "storage", &bytes);
    if (xp_fb_failed(fb)) return fb->status;
    p->legacy[i].data = xp_fb_vec_bytes(&bytes);
    p->legacy[i].size = bytes.count;
  }
  p->info.legacy_constant_buffer_count = v.count;
  return XPACK_OK;
}

static xpack_status read_compile_specs(xp_fb* fb, const xp_fb_table* del, xpack_et_delegate* d) {
  xp_fb_vec v;
  xp_fb_vector(del, DELEGATE_COMPILE_SPECS, 4, "compile_specs", &v);
  if (xp_fb_failed(fb) || v.count == 0) return fb->status;
  if (!xp_fb_charge(fb, (uint64_t)v.count * 4, del->path, "compile_specs")) return fb->status;
  xpack_et_compile_spec* specs = calloc(v.count, sizeof *specs);
  if (!specs) return xp_fb_fail(fb, XPACK_ERR_NOMEM, del->path, "compile_specs", "out of memory");
  d->compile_specs = specs;
  d->compile_spec_count = v.count;
  for (uint32_t i = 0; i < v.count; i++) {
    xp_fb_table t;
    xp_fb_vec_table(&v, i, &t);
    uint32_t len = 0;
    specs[i].key = xp_fb_str(&t, SPEC_KEY, "key", &len);
    specs[i].key_len = len;
    xp_fb_vec value;
    xp_fb_vector(&t, SPEC_VALUE, 1, "value", &value);
    specs[i].value = xp_fb_vec_bytes(&value);
    specs[i].value_size = value.count;
    if (xp_fb_failed(fb)) return fb->status;
  }
  return XPACK_OK;
}

/* Locates a delegate's processed bytes (INLINE or SEGMENT) with the index checked. */
static xpack_status locate_processed(xpack_et_program* p, xp_fb* fb, const xp_fb_table* root, const xp_fb_table* ref,
                                     xpack_et_delegate* d) {
  int8_t loc = xp_fb_i8(ref, REF_LOCATION, XPACK_ET_LOCATION_INLINE, "location");
  uint32_t index = xp_fb_u32(ref, REF_INDEX, 0, "index");
  if (xp_fb_failed(fb)) return fb->status;
  d->index = index;
  if (loc == XPACK_ET_LOCATION_SEGMENT) {
    d->location = XPACK_ET_LOCATION_SEGMENT;
    if (index >= p->info.segment_count) {
      return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, ref->path, "index", "%u but the program has %zu segments",
                        (unsigned)index, p->info.segment_count);
    }
    d->data = p->segments[index].size ? p->map.data + p->segments[index].offset : NULL;
    d->size = (size_t)p->segments[index].size;
  } else if (loc == XPACK_ET_LOCATION_INLINE) {
    d->location = XPACK_ET_LOCATION_INLINE;
    xp_fb_vec inl;
    xp_fb_vector(root, PROGRAM_BACKEND_DELEGATE_DATA, 4, "backend_delegate_data", &inl);
    if (xp_fb_failed(fb)) return fb->status;
    if (index >= inl.count) {
      return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, ref->path, "index",
                        "%u (INLINE) but the program has %u backend_delegate_data entries", (unsigned)index,
                        (unsigned)inl.count);
    }
    xp_fb_table t;
    xp_fb_vec_table(&inl, index, &t);
    xp_fb_vec bytes;
    xp_fb_vector(&t, INLINE_DATA, 1, "data", &bytes);
    if (xp_fb_failed(fb)) return fb->status;
    d->data = xp_fb_vec_bytes(&bytes);
    d->size = bytes.count;
  } else {
    return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, ref->path, "location", "%d; expected INLINE (0) or SEGMENT (1)", loc);
  }
  d->file_offset = d->data ? (uint64_t)(d->data - p->map.data) : 0;
  return XPACK_OK;
}

/* XNNPACK blob bytes the delegates of a program may name, all together, per byte of the file. Each delegate's blob
 * is parsed and replayed, even when several delegates name one blob (ExecuTorch's methods may share one, as an
 * LLM's prefill and decode do): 2,000 delegates naming one blob of 370 KB in a file of 563 KB took 70 s to pack
 * and 528 MB to inspect (a review on 2026-11-28). Programs of every method sharing every blob stay far below. Each
 * delegate counts at least XP_ET_BLOB_MIN_CHARGE bytes, for what a replay and a runtime cost beyond the blob's
 * bytes: many entries naming one tiny blob cost that many replays. */
#define XP_ET_BLOB_BYTES_PER_FILE_BYTE 64u
#define XP_ET_BLOB_MIN_CHARGE 4096u

static xpack_status read_methods(xpack_et_program* p, xp_fb* fb, const xp_fb_table* root) {
  uint64_t blob_bytes = 0;
  xp_fb_vec plans;
  xp_fb_vector(root, PROGRAM_EXECUTION_PLAN, 4, "execution_plan", &plans);
  if (xp_fb_failed(fb) || plans.count == 0) return fb->status;
  if (!xp_fb_charge(fb, (uint64_t)plans.count * 4, "", "execution_plan")) return fb->status;
  p->methods = calloc(plans.count, sizeof *p->methods);
  if (!p->methods) return xp_fb_fail(fb, XPACK_ERR_NOMEM, "", "execution_plan", "out of memory");
  p->info.methods = p->methods;
  p->info.method_count = plans.count;
  for (uint32_t m = 0; m < plans.count; m++) {
    xp_fb_table plan;
    xp_fb_vec_table(&plans, m, &plan);
    uint32_t name_len = 0;
    p->methods[m].name = xp_fb_str(&plan, PLAN_NAME, "name", &name_len);
    p->methods[m].name_len = name_len;
    xp_fb_vec dels;
    xp_fb_vector(&plan, PLAN_DELEGATES, 4, "delegates", &dels);
    if (xp_fb_failed(fb)) return fb->status;
    if (dels.count == 0) continue;
    if (!xp_fb_charge(fb, (uint64_t)dels.count * 4, plan.path, "delegates")) return fb->status;
    xpack_et_delegate* ds = calloc(dels.count, sizeof *ds);
    if (!ds) return xp_fb_fail(fb, XPACK_ERR_NOMEM, plan.path, "delegates", "out of memory");
    p->methods[m].delegates = ds;
    p->methods[m].delegate_count = dels.count;
    for (uint32_t i = 0; i < dels.count; i++) {
      xp_fb_table del, ref;
      xp_fb_vec_table(&dels, i, &del);
      uint32_t id_len = 0;
      ds[i].backend_id = xp_fb_str(&del, DELEGATE_ID, "id", &id_len);
      ds[i].backend_id_len = id_len;
      if (xp_fb_failed(fb)) return fb->status;
      if (!ds[i].backend_id) return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, del.path, "id", "missing backend id");
      ds[i].is_xnnpack = id_len == sizeof XNNPACK_BACKEND_ID - 1 &&
                         memcmp(ds[i].backend_id, XNNPACK_BACKEND_ID, id_len) == 0;
      if (!xp_fb_child(&del, DELEGATE_PROCESSED, "processed", &ref)) {
        if (xp_fb_failed(fb)) return fb->status;
        return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, del.path, "processed", "missing (where the delegate's data lives)");
      }
      xpack_status st = locate_processed(p, fb, root, &ref, &ds[i]);
      if (st == XPACK_OK) st = read_compile_specs(fb, &del, &ds[i]);
      if (st != XPACK_OK) return st;
      if (!ds[i].is_xnnpack) continue;
      p->info.xnnpack_delegate_count++;
      blob_bytes += ds[i].size > XP_ET_BLOB_MIN_CHARGE ? ds[i].size : XP_ET_BLOB_MIN_CHARGE;
      if (blob_bytes / XP_ET_BLOB_BYTES_PER_FILE_BYTE > p->info.file_size) {
        return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, del.path, "processed",
                          "the XNNPACK delegates up to this one name %llu bytes of blobs (at least 4 KiB each), more than %u times the "
                          "file's %zu bytes: each delegate's blob is read and replayed, so naming one blob that "
                          "often costs time and memory out of proportion to the file",
                          (unsigned long long)blob_bytes, XP_ET_BLOB_BYTES_PER_FILE_BYTE, p->info.file_size);
      }
    }
  }
  return XPACK_OK;
}

static xpack_status parse_program(xpack_et_program* p, xpack_error* err) {
  const uint8_t* d = p->map.data;
  size_t size = p->map.size;
  p->info.name = p->name;
  p->info.file_size = size;
  if (size < 8 || memcmp(d + 4, "ET12", 4) != 0) return reject_non_program(p->name, d, size, err);
  size_t region = size;
  xpack_status st = read_extended_header(p, &region, err);
  if (st != XPACK_OK) return st;
  if (p->info.extended_header_size == 0) p->info.program_size = size;

  xp_fb fb;
  xp_fb_init(&fb, d, region, p->name, err);
  xp_fb_table root;
  if (!xp_fb_root(&fb, &root)) return fb.status;
  p->info.version = xp_fb_u32(&root, PROGRAM_VERSION, 0, "version");
  if (xp_fb_failed(&fb)) return fb.status;
  if ((st = read_segments(p, &fb, &root)) != XPACK_OK) return st;
  if ((st = read_named_data(p, &fb, &root)) != XPACK_OK) return st;
  if ((st = read_legacy_constants(p, &fb, &root)) != XPACK_OK) return st;
  xp_fb_vec inl;
  xp_fb_vector(&root, PROGRAM_BACKEND_DELEGATE_DATA, 4, "backend_delegate_data", &inl);
  p->info.inline_delegate_data_count = inl.count;
  if (xp_fb_failed(&fb)) return fb.status;
  return read_methods(p, &fb, &root);
}

static xpack_status finish_open(xpack_et_program* p, xpack_et_program** out, xpack_error* err) {
  xpack_status st = parse_program(p, err);
  if (st != XPACK_OK) {
    xpack_et_program_close(p);
    return st;
  }
  *out = p;
  return XPACK_OK;
}

xpack_status xpack_et_program_open(const char* path, xpack_et_program** out, xpack_error* err) {
  return xpack_et_program_open_flags(path, 0, out, err);
}

xpack_status xpack_et_program_open_flags(const char* path, unsigned flags, xpack_et_program** out, xpack_error* err) {
  if (out != NULL) *out = NULL; /* on every failure, a caller error included */
  if (!path || !out || (flags & ~(unsigned)XPACK_ET_OPEN_WEIGHTS_ON_DEMAND) != 0) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_et_program_open: NULL path or out, or unknown flags");
  }
  xpack_et_program* p = calloc(1, sizeof *p);
  if (!p || !(p->name = xp_et_strdup(path))) {
    free(p);
    return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", path);
  }
  xp_et_memo_init(&p->hashes);
  xpack_status st = xp_et_map_file(path, &p->map, err);
  if (st != XPACK_OK) {
    xpack_et_program_close(p);
    return st;
  }
  const int on_demand = (flags & XPACK_ET_OPEN_WEIGHTS_ON_DEMAND) != 0 && xp_et_worth_reading_on_demand(&p->map);
  if (on_demand) {
    p->map.read_on_demand = 1;
    xp_et_program_advise_before_parse(&p->map);
  }
  st = finish_open(p, out, err);
  if (st == XPACK_OK && on_demand) xp_et_program_advise_after_parse(*out);
  return st;
}

xpack_status xpack_et_program_open_memory(const void* data, size_t size, const char* name, xpack_et_program** out,
                                          xpack_error* err) {
  if (out != NULL) *out = NULL; /* on every failure, a caller error included */
  if (!out || (!data && size)) return xp_fail(err, XPACK_ERR_ARG, "xpack_et_program_open_memory: NULL data or out");
  xpack_et_program* p = calloc(1, sizeof *p);
  if (!p || !(p->name = xp_et_strdup(name ? name : "(memory)"))) {
    free(p);
    return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
  }
  xp_et_memo_init(&p->hashes);
  p->map.data = data;
  p->map.size = size;
  return finish_open(p, out, err);
}

void xpack_et_program_close(xpack_et_program* p) {
  if (!p) return;
  for (size_t m = 0; m < p->info.method_count; m++) {
    xpack_et_method* method = &p->methods[m];
    for (size_t i = 0; i < method->delegate_count; i++) free((void*)method->delegates[i].compile_specs);
    free((void*)method->delegates);
  }
  free(p->methods);
  free(p->segments);
  free(p->named);
  free(p->named_sorted);
  free(p->legacy);
  xp_et_memo_free(&p->hashes);
  xp_et_map_release(&p->map);
  free(p->name);
  free(p);
}

const xpack_et_program_info* xpack_et_program_get_info(const xpack_et_program* p) { return p ? &p->info : NULL; }

const uint8_t* xpack_et_program_bytes(const xpack_et_program* p, size_t* size) {
  if (size) *size = p ? p->map.size : 0;
  return p ? p->map.data : NULL;
}

const xpack_et_named_data* xpack_et_program_find_named(const xpack_et_program* p, const char* key, size_t key_len) {
  if (!p || !key || p->info.named_data_count == 0) return NULL;
  size_t i = xp_et_find_key(p->named_sorted, p->info.named_data_count, p->named, sizeof *p->named,
                            offsetof(xpack_et_named_data, key), offsetof(xpack_et_named_data, key_len), key, key_len);
  return i == SIZE_MAX ? NULL : &p->named[i];
}

xpack_status xpack_et_program_legacy_constant(const xpack_et_program* p, size_t index, const uint8_t** data,
                                              size_t* size, xpack_error* err) {
  if (!p || !data || !size) return xp_fail(err, XPACK_ERR_ARG, "xpack_et_program_legacy_constant: NULL argument");
  if (index >= p->info.legacy_constant_buffer_count) {
    return xp_fail(err, XPACK_ERR_ARG, "%s: constant_buffer[%zu] requested but the program has %zu", p->name, index,
                   p->info.legacy_constant_buffer_count);
  }
  *data = p->legacy[index].data;
  *size = p->legacy[index].size;
  return XPACK_OK;
}
