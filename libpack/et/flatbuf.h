/* flatbuf.h - a verifying flatbuffer reader for untrusted model files.
 *
 * Every access checks the bytes it is about to touch, by the rule of the reference flatbuffers verifier
 * (et/FLATBUFFERS.md): table and vtable positions (aligned, inside the buffer), fields (aligned to their
 * width, inside the buffer; a vtable's declared inline size is not a bound), offsets (non-zero, forward,
 * below 2^31, aligned, inside the buffer), vector lengths (with overflow-safe multiplication), strings
 * (NUL inside the buffer) and union types.
 *
 * Errors are sticky: the first failure is recorded in the xp_fb context (status plus a message
 * naming the file, the field path and what was expected) and every later access returns a safe
 * default (0, NULL, empty vector). Callers read a group of fields and then check xp_fb_failed(),
 * which keeps the parsers short without ever reading out of bounds.
 *
 * Offsets in flatbuffers only point forward, so reference cycles are impossible; a depth limit
 * still guards against pathological nesting should a schema ever become recursive.
 */
#ifndef XPACK_ET_FLATBUF_H
#define XPACK_ET_FLATBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "xpack_status.h"

#define XP_FB_PATH_MAX 192
#define XP_FB_MAX_DEPTH 32

typedef struct xp_fb {
  const uint8_t* data;
  size_t size;
  const char* name; /* file (or file plus location) used as the message prefix */
  xpack_error* err; /* may be NULL */
  xpack_status status;
  uint64_t charged; /* bytes of per-entry objects materialized so far: see xp_fb_charge */
} xp_fb;

typedef struct xp_fb_table {
  xp_fb* fb;
  size_t pos;
  size_t vtable;
  uint16_t vtable_size;
  unsigned depth;
  char path[XP_FB_PATH_MAX];
} xp_fb_table;

typedef struct xp_fb_vec {
  xp_fb* fb;
  size_t pos; /* first element */
  uint32_t count;
  uint32_t elem_size;
  unsigned depth;
  char path[XP_FB_PATH_MAX];
} xp_fb_vec;

void xp_fb_init(xp_fb* fb, const uint8_t* data, size_t size, const char* name, xpack_error* err);
static inline bool xp_fb_failed(const xp_fb* fb) { return fb->status != XPACK_OK; }

/* Records the first error as "<name>: <path>[.<field>]: <message>"; returns the sticky status. */
xpack_status xp_fb_fail(xp_fb* fb, xpack_status status, const char* path, const char* field, const char* fmt, ...)
    XPACK_PRINTF(5, 6);

/* The root table (uoffset at byte 0). Returns false (and records why) when it is not a valid table. */
bool xp_fb_root(xp_fb* fb, xp_fb_table* out);

bool xp_fb_has(const xp_fb_table* t, unsigned id);

/* Scalars: the default when the field is absent or on error. */
uint8_t xp_fb_u8(const xp_fb_table* t, unsigned id, uint8_t dflt, const char* field);
int8_t xp_fb_i8(const xp_fb_table* t, unsigned id, int8_t dflt, const char* field);
int16_t xp_fb_i16(const xp_fb_table* t, unsigned id, int16_t dflt, const char* field);
uint32_t xp_fb_u32(const xp_fb_table* t, unsigned id, uint32_t dflt, const char* field);
int32_t xp_fb_i32(const xp_fb_table* t, unsigned id, int32_t dflt, const char* field);
uint64_t xp_fb_u64(const xp_fb_table* t, unsigned id, uint64_t dflt, const char* field);
float xp_fb_f32(const xp_fb_table* t, unsigned id, float dflt, const char* field);

/* A string: NUL-terminated inside the buffer, so the pointer is usable as a C string. NULL when absent
 * or on error; *len (optional) gets its byte length. */
const char* xp_fb_str(const xp_fb_table* t, unsigned id, const char* field, uint32_t* len);

/* A sub-table. Returns true when present and valid. */
bool xp_fb_child(const xp_fb_table* t, unsigned id, const char* field, xp_fb_table* out);

/* A vector whose elements are elem_size bytes inline (1, 2, 4, 8; 4 for tables and strings).
 * Returns true when present; out->count is 0 when absent or on error. */
bool xp_fb_vector(const xp_fb_table* t, unsigned id, uint32_t elem_size, const char* field, xp_fb_vec* out);

bool xp_fb_vec_table(const xp_fb_vec* v, uint32_t i, xp_fb_table* out);
uint32_t xp_fb_vec_u32(const xp_fb_vec* v, uint32_t i);
const uint8_t* xp_fb_vec_bytes(const xp_fb_vec* v);

/* The element array as host floats, without a copy: requires 4-byte alignment (flatbuffers always
 * aligns scalar vectors to their width) and a little-endian host. NULL (and an error) otherwise. */
const float* xp_fb_vec_f32_ptr(const xp_fb_vec* v);

/* A union: the type byte at type_id and the table at value_id. Returns the type (0 = NONE) and fills
 * *value for types 1..max_type. A type above max_type is recorded as XPACK_ERR_UNSUPPORTED. */
uint8_t xp_fb_union(const xp_fb_table* t, unsigned type_id, unsigned value_id, uint8_t max_type, const char* field,
                    xp_fb_table* value);

/* Offsets only point forward, but nothing stops many of them from pointing at one table, vector or
 * string: 4-byte offsets to one shared object would make a reader build one record, copy one array or
 * compare one key per offset, so a file of kilobytes could cost gigabytes and minutes (a 16 KB program
 * whose 2,000 methods all share one list of 2,000 delegates once took 3.6 GB and 16 s to open). Readers
 * call this with the bytes each entry they materialize occupies in the buffer (4 per element of a vector of
 * offsets or u32s, a key's length) before they allocate for it; once the total exceeds the buffer's size the
 * entries must share objects, which no writer does, and the file is refused naming the field. Returns true
 * when the charge fits, false when it refuses the file or fb had already failed. */
bool xp_fb_charge(xp_fb* fb, uint64_t bytes, const char* path, const char* field);

/* Joins a path for messages: "<base>.<field>" or "<base>[<index>]". */
void xp_fb_path_field(char* out, const char* base, const char* field);
void xp_fb_path_index(char* out, const char* base, uint32_t index);

#endif
