/* Verifying flatbuffer reader: see flatbuf.h for the contract. */
#include "et/flatbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/le.h"

void xp_fb_init(xp_fb* fb, const uint8_t* data, size_t size, const char* name, xpack_error* err) {
  fb->data = data;
  fb->size = data ? size : 0;
  fb->name = name ? name : "(memory)";
  fb->err = err;
  fb->status = XPACK_OK;
  fb->charged = 0;
}

bool xp_fb_charge(xp_fb* fb, uint64_t bytes, const char* path, const char* field) {
  if (xp_fb_failed(fb)) return false;
  if (bytes <= fb->size && fb->charged <= fb->size - bytes) {
    fb->charged += bytes;
    return true;
  }
  xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, field,
             "the entries read so far occupy more than the %zu-byte buffer (%llu bytes, then %llu more): entries "
             "share tables, vectors or strings, which no writer does; refused before reading them costs memory or "
             "time out of proportion to the file",
             fb->size, (unsigned long long)fb->charged, (unsigned long long)bytes);
  return false;
}

xpack_status xp_fb_fail(xp_fb* fb, xpack_status status, const char* path, const char* field, const char* fmt, ...) {
  if (fb->status != XPACK_OK) return fb->status;
  fb->status = status;
  if (!fb->err) return status;
  char what[320];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  char where[XP_FB_PATH_MAX + 64];
  if (field && path && path[0]) {
    snprintf(where, sizeof where, "%s.%s", path, field);
  } else if (field) {
    snprintf(where, sizeof where, "%s", field);
  } else if (path && path[0]) {
    snprintf(where, sizeof where, "%s", path);
  } else {
    snprintf(where, sizeof where, "root table");
  }
  return xp_fail(fb->err, status, "%s: %s: %s", fb->name, where, what);
}

/* Paths only serve messages: a very deep one is cut short rather than failing the parse. */
static void path_truncated(char* out) { memcpy(out + XP_FB_PATH_MAX - 4, "...", 4); }

/* out = a b c, cut as snprintf would cut it into XP_FB_PATH_MAX bytes and then marked. Paths are joined for every
 * table and vector element a parse visits, so this is plain copying: snprintf was most of a large graph's parse.
 * Byte by byte: for memcpy of a length it knows is below 192, GCC inlines `rep movsq`, whose start-up cost made
 * this copy of a few dozen bytes half of parsing a small graph (perf, on this project's Intel VM). */
static void join3(char* out, const char* a, size_t a_len, const char* b, size_t b_len, const char* c, size_t c_len) {
  const char* parts[3] = {a, b, c};
  const size_t lens[3] = {a_len, b_len, c_len};
  size_t n = 0;
  bool cut = false;
  for (int k = 0; k < 3; k++) {
    size_t take = lens[k];
    if (n + take > XP_FB_PATH_MAX - 1) take = XP_FB_PATH_MAX - 1 - n, cut = true;
    for (size_t i = 0; i < take; i++) out[n + i] = parts[k][i];
    n += take;
  }
  out[n] = 0;
  if (cut) path_truncated(out);
}

void xp_fb_path_field(char* out, const char* base, const char* field) {
  if (base[0] == 0) join3(out, field, strlen(field), "", 0, "", 0);
  else join3(out, base, strlen(base), ".", 1, field, strlen(field));
}

void xp_fb_path_index(char* out, const char* base, uint32_t index) {
  char digits[16];
  size_t n = sizeof digits;
  digits[--n] = ']';
  do digits[--n] = (char)('0' + index % 10); while ((index /= 10) != 0);
  digits[--n] = '[';
  join3(out, base, strlen(base), digits + n, sizeof digits - n, "", 0);
}

/* "Can `len` bytes be read at `pos`?" without overflow. */
static bool in_bounds(const xp_fb* fb, size_t pos, size_t len) { return pos <= fb->size && len <= fb->size - pos; }

/* Follows a uoffset stored at `at`: the target is at + offset and must be inside the buffer with
 * room for `need` bytes. Returns false and records an error otherwise. */
static bool follow(xp_fb* fb, size_t at, size_t need, const char* path, const char* field, size_t* target) {
  if (!in_bounds(fb, at, 4)) {
    xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, field, "offset field at byte %zu is outside the %zu-byte buffer", at,
               fb->size);
    return false;
  }
  if (at % 4 != 0) {
    xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, field, "offset field at byte %zu is not 4-byte aligned", at);
    return false;
  }
  uint32_t off = xp_le32(fb->data + at);
  /* As the reference verifier: an offset never points at itself and stays below 2^31. */
  if (off == 0 || off > INT32_MAX) {
    xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, field, "offset %u at byte %zu is not a forward offset below 2^31",
               (unsigned)off, at);
    return false;
  }
  size_t t = at + off; /* at < size <= SIZE_MAX, off < 2^32: no overflow on 64-bit; checked below anyway */
  if (t < at || !in_bounds(fb, t, need)) {
    xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, field,
               "offset %u at byte %zu points to byte %zu, past the end of the %zu-byte buffer", (unsigned)off, at, t,
               fb->size);
    return false;
  }
  *target = t;
  return true;
}

/* An absent or invalid table: every field but the path, which the caller has written. */
static void clear_table(xp_fb* fb, xp_fb_table* out) {
  out->fb = fb;
  out->pos = 0;
  out->vtable = 0;
  out->vtable_size = 0;
  out->depth = 0;
}

/* The table at pos, into *out, whose path the caller has written: a parse visits every table, so its path is
 * joined once, in place (clearing the whole of *out was a large part of parsing a small graph). */
static bool table_at(xp_fb* fb, size_t pos, unsigned depth, xp_fb_table* out) {
  const char* path = out->path;
  clear_table(fb, out);
  if (xp_fb_failed(fb)) return false;
  if (depth > XP_FB_MAX_DEPTH) {
    xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, NULL, "tables nested deeper than %d", XP_FB_MAX_DEPTH);
    return false;
  }
  if (!in_bounds(fb, pos, 4) || pos % 4 != 0) {
    xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, NULL, "table at byte %zu is outside the %zu-byte buffer or not 4-byte aligned",
               pos, fb->size);
    return false;
  }
  int32_t soff = xp_le32s(fb->data + pos);
  /* vtable = table - soffset, computed in signed 64-bit to stay exact for any 32-bit soffset. */
  int64_t vt = (int64_t)pos - (int64_t)soff;
  if (vt < 0 || (uint64_t)vt > (uint64_t)fb->size || !in_bounds(fb, (size_t)vt, 2) || vt % 2 != 0) {
    xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, NULL, "table at byte %zu has its vtable at %lld, outside the buffer or odd",
               pos, (long long)vt);
    return false;
  }
  uint16_t vt_size = xp_le16(fb->data + vt);
  if ((vt_size & 1) || !in_bounds(fb, (size_t)vt, vt_size)) {
    xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, NULL, "vtable at byte %lld has invalid size %u", (long long)vt,
               (unsigned)vt_size);
    return false;
  }
  out->pos = pos;
  out->vtable = (size_t)vt;
  out->vtable_size = vt_size;
  out->depth = depth;
  return true;
}

bool xp_fb_root(xp_fb* fb, xp_fb_table* out) {
  size_t pos = 0;
  out->path[0] = 0;
  if (!follow(fb, 0, 4, "", "root offset", &pos)) {
    clear_table(fb, out);
    return false;
  }
  return table_at(fb, pos, 0, out);
}

/* Position of field `id` if present, 0 if absent. The rule is the flatbuffers verifier's (et/FLATBUFFERS.md):
 * the field is aligned to its width and lies inside the buffer. The vtable's inline size is not a bound:
 * writers such as ExecuTorch's training export declare it smaller than the fields they place. */
static size_t field_pos(const xp_fb_table* t, unsigned id, size_t width, const char* field) {
  if (!t->fb || xp_fb_failed(t->fb)) return 0;
  size_t slot = 4 + 2 * (size_t)id;
  if (slot + 2 > t->vtable_size) return 0;
  uint16_t off = xp_le16(t->fb->data + t->vtable + slot);
  if (off == 0) return 0;
  size_t at = t->pos + off;
  if (at % width != 0 || !in_bounds(t->fb, at, width)) {
    xp_fb_fail(t->fb, XPACK_ERR_BAD_INPUT, t->path, field,
               "field at table offset %u (byte %zu) needs %zu bytes aligned to %zu inside the %zu-byte buffer",
               (unsigned)off, at, width, width, t->fb->size);
    return 0;
  }
  return at;
}

bool xp_fb_has(const xp_fb_table* t, unsigned id) {
  if (!t->fb || xp_fb_failed(t->fb)) return false;
  size_t slot = 4 + 2 * (size_t)id;
  if (slot + 2 > t->vtable_size) return false;
  return xp_le16(t->fb->data + t->vtable + slot) != 0;
}

uint8_t xp_fb_u8(const xp_fb_table* t, unsigned id, uint8_t dflt, const char* field) {
  size_t p = field_pos(t, id, 1, field);
  return p ? t->fb->data[p] : dflt;
}

int8_t xp_fb_i8(const xp_fb_table* t, unsigned id, int8_t dflt, const char* field) {
  size_t p = field_pos(t, id, 1, field);
  return p ? (int8_t)t->fb->data[p] : dflt;
}

int16_t xp_fb_i16(const xp_fb_table* t, unsigned id, int16_t dflt, const char* field) {
  size_t p = field_pos(t, id, 2, field);
  return p ? (int16_t)xp_le16(t->fb->data + p) : dflt;
}

uint32_t xp_fb_u32(const xp_fb_table* t, unsigned id, uint32_t dflt, const char* field) {
  size_t p = field_pos(t, id, 4, field);
  return p ? xp_le32(t->fb->data + p) : dflt;
}

int32_t xp_fb_i32(const xp_fb_table* t, unsigned id, int32_t dflt, const char* field) {
  size_t p = field_pos(t, id, 4, field);
  return p ? xp_le32s(t->fb->data + p) : dflt;
}

uint64_t xp_fb_u64(const xp_fb_table* t, unsigned id, uint64_t dflt, const char* field) {
  size_t p = field_pos(t, id, 8, field);
  return p ? xp_le64(t->fb->data + p) : dflt;
}

float xp_fb_f32(const xp_fb_table* t, unsigned id, float dflt, const char* field) {
  size_t p = field_pos(t, id, 4, field);
  return p ? xp_lef32(t->fb->data + p) : dflt;
}

/* A string object at `s`: u32 length, bytes, NUL. */
static const char* string_at(xp_fb* fb, size_t s, const char* path, const char* field, uint32_t* len) {
  if (s % 4 != 0) {
    xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, field, "string at byte %zu is not 4-byte aligned", s);
    return NULL;
  }
  uint32_t n = xp_le32(fb->data + s);
  if ((uint64_t)n >= (uint64_t)fb->size || !in_bounds(fb, s + 4, (size_t)n + 1)) { /* n + 1 wraps on 32 bits */
    xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, field, "string of %u bytes at byte %zu runs past the buffer end",
               (unsigned)n, s);
    return NULL;
  }
  if (fb->data[s + 4 + n] != 0) {
    xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, field, "string at byte %zu is not NUL-terminated", s);
    return NULL;
  }
  /* ExecuTorch reads keys and names as C strings: bytes after a zero byte would be part of our identity
   * (so "w\0a" and "w\0b" would be two weights) but not of its look-ups. */
  const uint8_t* zero = memchr(fb->data + s + 4, 0, n);
  if (zero != NULL) {
    xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, field,
               "string at byte %zu holds a zero byte at position %zu of its %u bytes (ExecuTorch reads it as a C "
               "string)", s, (size_t)(zero - (fb->data + s + 4)), (unsigned)n);
    return NULL;
  }
  if (len) *len = n;
  return (const char*)fb->data + s + 4;
}

const char* xp_fb_str(const xp_fb_table* t, unsigned id, const char* field, uint32_t* len) {
  if (len) *len = 0;
  size_t p = field_pos(t, id, 4, field);
  size_t s;
  if (!p || !follow(t->fb, p, 4, t->path, field, &s)) return NULL;
  return string_at(t->fb, s, t->path, field, len);
}

bool xp_fb_child(const xp_fb_table* t, unsigned id, const char* field, xp_fb_table* out) {
  xp_fb_table parent;
  if (out == t) { /* the child replaces its parent: read the parent from a copy */
    parent = *t;
    t = &parent;
  }
  xp_fb_path_field(out->path, t->path, field);
  size_t p = field_pos(t, id, 4, field);
  size_t c;
  if (!p || !follow(t->fb, p, 4, t->path, field, &c)) {
    clear_table(t->fb, out);
    return false;
  }
  return table_at(t->fb, c, t->depth + 1, out);
}

bool xp_fb_vector(const xp_fb_table* t, unsigned id, uint32_t elem_size, const char* field, xp_fb_vec* out) {
  out->fb = t->fb;
  out->pos = 0;
  out->count = 0;
  out->elem_size = elem_size;
  out->depth = t->depth + 1;
  xp_fb_path_field(out->path, t->path, field);
  size_t p = field_pos(t, id, 4, field);
  size_t v;
  if (!p || !follow(t->fb, p, 4, t->path, field, &v)) return false;
  if (v % 4 != 0) {
    xp_fb_fail(t->fb, XPACK_ERR_BAD_INPUT, t->path, field, "vector at byte %zu is not 4-byte aligned", v);
    return false;
  }
  uint32_t n = xp_le32(t->fb->data + v);
  /* n < 2^32 and elem_size <= 8: the product fits in 64 bits; compare against what is left. */
  uint64_t bytes = (uint64_t)n * elem_size;
  size_t left = t->fb->size - (v + 4);
  if (bytes > left) {
    xp_fb_fail(t->fb, XPACK_ERR_BAD_INPUT, t->path, field,
               "vector at byte %zu claims %u elements of %u bytes, but only %zu bytes follow", v, (unsigned)n,
               (unsigned)elem_size, left);
    return false;
  }
  out->pos = v + 4;
  out->count = n;
  return true;
}

bool xp_fb_vec_table(const xp_fb_vec* v, uint32_t i, xp_fb_table* out) {
  xp_fb_path_index(out->path, v->path, i);
  size_t c;
  if (i >= v->count || v->elem_size != 4 || xp_fb_failed(v->fb) ||
      !follow(v->fb, v->pos + (size_t)i * 4, 4, out->path, NULL, &c)) {
    clear_table(v->fb, out);
    return false;
  }
  return table_at(v->fb, c, v->depth, out);
}

uint32_t xp_fb_vec_u32(const xp_fb_vec* v, uint32_t i) {
  if (i >= v->count || v->elem_size != 4) return 0;
  return xp_le32(v->fb->data + v->pos + (size_t)i * 4);
}

const uint8_t* xp_fb_vec_bytes(const xp_fb_vec* v) { return v->count ? v->fb->data + v->pos : NULL; }

static bool host_is_little_endian(void) {
  const uint16_t one = 1;
  uint8_t b;
  memcpy(&b, &one, 1);
  return b == 1;
}

const float* xp_fb_vec_f32_ptr(const xp_fb_vec* v) {
  if (v->count == 0 || v->elem_size != 4 || xp_fb_failed(v->fb)) return NULL;
  const uint8_t* p = v->fb->data + v->pos;
  if (!host_is_little_endian()) {
    xp_fb_fail(v->fb, XPACK_ERR_UNSUPPORTED, v->path, NULL, "float arrays are read in place, which needs a little-endian host");
    return NULL;
  }
  if (((uintptr_t)p & 3u) != 0) {
    /* Where the flatbuffer is misaligned, the vector may well be aligned within it: say which one is off. */
    const unsigned start_off = (unsigned)((uintptr_t)v->fb->data & 3u);
    if (start_off != 0 && (v->pos & 3u) == 0) {
      xp_fb_fail(v->fb, XPACK_ERR_BAD_INPUT, v->path, NULL,
                 "float vector at byte %zu is not 4-byte aligned in memory: the flatbuffer itself starts %u byte(s) "
                 "past a 4-byte boundary (where the blob places it, or where the file places the blob)",
                 v->pos, start_off);
    } else {
      xp_fb_fail(v->fb, XPACK_ERR_BAD_INPUT, v->path, NULL, "float vector at byte %zu is not 4-byte aligned", v->pos);
    }
    return NULL;
  }
  return (const float*)(const void*)p;
}

uint8_t xp_fb_union(const xp_fb_table* t, unsigned type_id, unsigned value_id, uint8_t max_type, const char* field,
                    xp_fb_table* value) {
  clear_table(t->fb, value);
  value->path[0] = 0;
  char type_field[XP_FB_PATH_MAX];
  join3(type_field, field, strlen(field), "_type", 5, "", 0);
  uint8_t type = xp_fb_u8(t, type_id, 0, type_field);
  if (xp_fb_failed(t->fb) || type == 0) return 0;
  if (type > max_type) {
    xp_fb_fail(t->fb, XPACK_ERR_UNSUPPORTED, t->path, type_field, "union type %u is not known to this xpack (known: 1..%u)",
               (unsigned)type, (unsigned)max_type);
    return 0;
  }
  if (!xp_fb_has(t, value_id)) {
    xp_fb_fail(t->fb, XPACK_ERR_BAD_INPUT, t->path, field, "union type is %u but the value is missing", (unsigned)type);
    return 0;
  }
  if (!xp_fb_child(t, value_id, field, value)) return 0;
  return type;
}
