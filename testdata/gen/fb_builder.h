/* A minimal FlatBuffers builder (back-to-front, like the reference implementation) sufficient to write
 * ExecuTorch Program, XNNGraph and FlatTensor buffers. Scalars equal to their schema default are
 * omitted, as flatc does when the exporter compiles its JSON, so field presence matches real files. */
#ifndef XPACK_GEN_FB_BUILDER_H
#define XPACK_GEN_FB_BUILDER_H

#include <stddef.h>
#include <stdint.h>

/* A finished object's position, counted from the end of the buffer (0 = none). */
typedef uint32_t fb_ref;

#define FB_MAX_SLOTS 32

typedef struct fb_field {
  uint16_t slot;
  uint8_t size;   /* 1, 2, 4 or 8 bytes; references are 4 */
  uint8_t is_ref;
  uint64_t bits;  /* scalar bits, or the fb_ref for references */
} fb_field;

typedef struct fb_builder {
  uint8_t* buf;
  size_t cap;
  size_t head; /* data lives in buf[head, cap) */
  size_t minalign;
  int in_table;
  fb_field fields[FB_MAX_SLOTS];
  int nfields;
  uint32_t* vtables; /* positions of written vtables, for de-duplication */
  size_t nvtables, vtables_cap;
  int failed; /* out of memory */
} fb_builder;

void fb_init(fb_builder* b);
void fb_free(fb_builder* b);

fb_ref fb_string(fb_builder* b, const char* s, size_t len);
fb_ref fb_cstring(fb_builder* b, const char* s);
/* Little-endian vectors of fixed-size scalars; `align` > elem_size forces a stronger alignment. */
fb_ref fb_vec_u8(fb_builder* b, const uint8_t* v, size_t n, size_t align);
fb_ref fb_vec_u32(fb_builder* b, const uint32_t* v, size_t n);
fb_ref fb_vec_i32(fb_builder* b, const int32_t* v, size_t n);
fb_ref fb_vec_i64(fb_builder* b, const int64_t* v, size_t n);
fb_ref fb_vec_f32(fb_builder* b, const float* v, size_t n);
fb_ref fb_vec_ref(fb_builder* b, const fb_ref* v, size_t n);

void fb_table_begin(fb_builder* b);
/* Each adds a field unless value == default (the schema default). */
void fb_add_u8(fb_builder* b, int slot, uint8_t v, uint8_t def);
void fb_add_i16(fb_builder* b, int slot, int16_t v, int16_t def);
void fb_add_u32(fb_builder* b, int slot, uint32_t v, uint32_t def);
void fb_add_i32(fb_builder* b, int slot, int32_t v, int32_t def);
void fb_add_u64(fb_builder* b, int slot, uint64_t v, uint64_t def);
void fb_add_i64(fb_builder* b, int slot, int64_t v, int64_t def);
void fb_add_f32(fb_builder* b, int slot, float v, float def);
void fb_add_ref(fb_builder* b, int slot, fb_ref r); /* skipped when r == 0 */
fb_ref fb_table_end(fb_builder* b);

/* From now on, every vtable this process writes declares an inline table size that stops 4 bytes past
 * the start of the table's last field, never below 4 nor above the true size: so a table ending in an
 * 8-byte field declares 4 bytes too few. ExecuTorch's training export writes such vtables (a DataSegment
 * of soffset + one u64 at offset 4 declares 8); the flatbuffers verifier accepts them, since it bounds
 * fields by the buffer, and readers must too. Off (the true size, as flatc writes) unless set. */
void fb_set_short_vtables(int on);

/* Writes the root offset and 4-byte identifier. Returns the finished bytes (valid until fb_free) or NULL. */
const uint8_t* fb_finish(fb_builder* b, fb_ref root, const char identifier[4], size_t* size);

#endif
