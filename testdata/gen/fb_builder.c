#include "fb_builder.h"

#include <stdlib.h>
#include <string.h>

#include "common/le.h"

static int g_short_vtables;
void fb_set_short_vtables(int on) { g_short_vtables = on; }

void fb_init(fb_builder* b) {
  memset(b, 0, sizeof *b);
  b->minalign = 1;
}

void fb_free(fb_builder* b) {
  free(b->buf);
  free(b->vtables);
  memset(b, 0, sizeof *b);
}

static size_t fb_size(const fb_builder* b) { return b->cap - b->head; }

/* Makes room for n more bytes in front of the data; data keeps its distance from the end. */
static int fb_reserve(fb_builder* b, size_t n) {
  if (b->failed) return 0;
  if (b->head >= n) return 1;
  size_t used = fb_size(b);
  size_t cap = b->cap ? b->cap : 1024;
  while (cap - used < n) cap *= 2;
  uint8_t* nb = malloc(cap);
  if (!nb) {
    b->failed = 1;
    return 0;
  }
  if (used) memcpy(nb + cap - used, b->buf + b->head, used);
  free(b->buf);
  b->buf = nb;
  b->cap = cap;
  b->head = cap - used;
  return 1;
}

static void fb_push(fb_builder* b, const void* p, size_t n) {
  if (!fb_reserve(b, n)) return;
  b->head -= n;
  memcpy(b->buf + b->head, p, n);
}

static void fb_pad(fb_builder* b, size_t n) {
  if (n == 0 || !fb_reserve(b, n)) return; /* no buffer may exist yet: memset(NULL, 0, 0) is undefined */
  b->head -= n;
  memset(b->buf + b->head, 0, n);
}

/* Pads so that after `len` more bytes the size is a multiple of `align`. */
static void fb_prealign(fb_builder* b, size_t len, size_t align) {
  if (align > b->minalign) b->minalign = align;
  size_t pad = (align - ((fb_size(b) + len) & (align - 1))) & (align - 1);
  fb_pad(b, pad);
}

static void fb_push_u32(fb_builder* b, uint32_t v) {
  uint8_t t[4];
  xp_put32(t, v);
  fb_prealign(b, 4, 4);
  fb_push(b, t, 4);
}

/* A reference stored at the next 4-byte slot, relative to that slot. */
static void fb_push_ref(fb_builder* b, fb_ref r) {
  fb_prealign(b, 4, 4);
  fb_push_u32(b, (uint32_t)(fb_size(b) + 4 - r));
}

fb_ref fb_string(fb_builder* b, const char* s, size_t len) {
  fb_prealign(b, len + 1, 4);
  fb_pad(b, 1);
  fb_push(b, s, len);
  fb_push_u32(b, (uint32_t)len);
  return (fb_ref)fb_size(b);
}

fb_ref fb_cstring(fb_builder* b, const char* s) { return fb_string(b, s, strlen(s)); }

static fb_ref fb_vec_raw(fb_builder* b, const uint8_t* le_bytes, size_t n, size_t elem, size_t align) {
  fb_prealign(b, n * elem, 4);
  fb_prealign(b, n * elem, align > elem ? align : elem);
  fb_push(b, le_bytes, n * elem);
  fb_push_u32(b, (uint32_t)n);
  return (fb_ref)fb_size(b);
}

fb_ref fb_vec_u8(fb_builder* b, const uint8_t* v, size_t n, size_t align) { return fb_vec_raw(b, v, n, 1, align); }

/* Wider element vectors are converted to little-endian in chunks pushed back to front. */
static fb_ref fb_vec_wide(fb_builder* b, const void* v, size_t n, size_t elem) {
  fb_prealign(b, n * elem, 4);
  fb_prealign(b, n * elem, elem);
  uint8_t t[8];
  for (size_t i = n; i-- > 0;) {
    const uint8_t* src = (const uint8_t*)v + i * elem;
    if (elem == 4) {
      uint32_t x;
      memcpy(&x, src, 4);
      xp_put32(t, x);
    } else {
      uint64_t x;
      memcpy(&x, src, 8);
      xp_put64(t, x);
    }
    fb_push(b, t, elem);
  }
  fb_push_u32(b, (uint32_t)n);
  return (fb_ref)fb_size(b);
}

fb_ref fb_vec_u32(fb_builder* b, const uint32_t* v, size_t n) { return fb_vec_wide(b, v, n, 4); }
fb_ref fb_vec_i32(fb_builder* b, const int32_t* v, size_t n) { return fb_vec_wide(b, v, n, 4); }
fb_ref fb_vec_i64(fb_builder* b, const int64_t* v, size_t n) { return fb_vec_wide(b, v, n, 8); }
fb_ref fb_vec_f32(fb_builder* b, const float* v, size_t n) { return fb_vec_wide(b, v, n, 4); }

fb_ref fb_vec_ref(fb_builder* b, const fb_ref* v, size_t n) {
  fb_prealign(b, n * 4, 4);
  for (size_t i = n; i-- > 0;) fb_push_ref(b, v[i]);
  fb_push_u32(b, (uint32_t)n);
  return (fb_ref)fb_size(b);
}

void fb_table_begin(fb_builder* b) {
  b->in_table = 1;
  b->nfields = 0;
}

static void fb_add(fb_builder* b, int slot, uint8_t size, int is_ref, uint64_t bits) {
  if (b->nfields >= FB_MAX_SLOTS || slot >= FB_MAX_SLOTS) {
    b->failed = 1;
    return;
  }
  fb_field* f = &b->fields[b->nfields++];
  f->slot = (uint16_t)slot;
  f->size = size;
  f->is_ref = (uint8_t)is_ref;
  f->bits = bits;
}

void fb_add_u8(fb_builder* b, int slot, uint8_t v, uint8_t def) {
  if (v != def) fb_add(b, slot, 1, 0, v);
}
void fb_add_i16(fb_builder* b, int slot, int16_t v, int16_t def) {
  if (v != def) fb_add(b, slot, 2, 0, (uint16_t)v);
}
void fb_add_u32(fb_builder* b, int slot, uint32_t v, uint32_t def) {
  if (v != def) fb_add(b, slot, 4, 0, v);
}
void fb_add_i32(fb_builder* b, int slot, int32_t v, int32_t def) {
  if (v != def) fb_add(b, slot, 4, 0, (uint32_t)v);
}
void fb_add_u64(fb_builder* b, int slot, uint64_t v, uint64_t def) {
  if (v != def) fb_add(b, slot, 8, 0, v);
}
void fb_add_i64(fb_builder* b, int slot, int64_t v, int64_t def) {
  if (v != def) fb_add(b, slot, 8, 0, (uint64_t)v);
}
void fb_add_f32(fb_builder* b, int slot, float v, float def) {
  uint32_t bits, dbits;
  memcpy(&bits, &v, 4);
  memcpy(&dbits, &def, 4);
  if (bits != dbits) fb_add(b, slot, 4, 0, bits);
}
void fb_add_ref(fb_builder* b, int slot, fb_ref r) {
  if (r) fb_add(b, slot, 4, 1, r);
}

/* The inline size the training export declares: 4 bytes past the start of the last field (see
 * fb_set_short_vtables). `loc` holds each present field's position counted from the end, like `table`. */
static size_t short_inline_size(const fb_builder* b, const uint32_t* loc, size_t table, size_t true_size) {
  size_t last_start = 0;
  for (int i = 0; i < b->nfields; i++) {
    size_t start = table - loc[b->fields[i].slot];
    if (start > last_start) last_start = start;
  }
  size_t declared = last_start + 4;
  return declared < true_size ? declared : true_size;
}

fb_ref fb_table_end(fb_builder* b) {
  size_t start = fb_size(b);
  uint32_t loc[FB_MAX_SLOTS] = {0};
  int max_slot = -1;
  /* Largest fields first, as flatc does, so padding between fields stays minimal. */
  for (int size = 8; size >= 1; size /= 2) {
    for (int i = 0; i < b->nfields; i++) {
      fb_field* f = &b->fields[i];
      if (f->size != size) continue;
      if (f->is_ref) {
        fb_push_ref(b, (fb_ref)f->bits);
      } else {
        uint8_t t[8];
        xp_put64(t, f->bits);
        fb_prealign(b, size, size);
        fb_push(b, t, size);
      }
      loc[f->slot] = (uint32_t)fb_size(b);
      if (f->slot > max_slot) max_slot = f->slot;
    }
  }
  fb_push_u32(b, 0); /* soffset to the vtable, patched below */
  size_t table = fb_size(b);
  size_t nslots = (size_t)(max_slot + 1);
  size_t vt_bytes = 4 + 2 * nslots;
  size_t inline_size = table - start;
  if (g_short_vtables) inline_size = short_inline_size(b, loc, table, inline_size);
  uint8_t vt[4 + 2 * FB_MAX_SLOTS];
  xp_put16(vt, (uint16_t)vt_bytes);
  xp_put16(vt + 2, (uint16_t)inline_size);
  for (size_t s = 0; s < nslots; s++) xp_put16(vt + 4 + 2 * s, (uint16_t)(loc[s] ? table - loc[s] : 0));
  b->in_table = 0;
  if (b->failed) return 0;

  size_t vt_pos = 0;
  for (size_t i = 0; i < b->nvtables; i++) {
    const uint8_t* old = b->buf + b->cap - b->vtables[i];
    if (xp_le16(old) == vt_bytes && memcmp(old, vt, vt_bytes) == 0) {
      vt_pos = b->vtables[i];
      break;
    }
  }
  if (!vt_pos) {
    fb_push(b, vt, vt_bytes);
    vt_pos = fb_size(b);
    if (b->nvtables == b->vtables_cap) {
      size_t nc = b->vtables_cap ? 2 * b->vtables_cap : 64;
      uint32_t* nv = realloc(b->vtables, nc * sizeof *nv);
      if (!nv) {
        b->failed = 1;
        return 0;
      }
      b->vtables = nv;
      b->vtables_cap = nc;
    }
    b->vtables[b->nvtables++] = (uint32_t)vt_pos;
  }
  if (b->failed) return 0;
  /* vtable address = table address - soffset */
  xp_put32(b->buf + b->cap - table, (uint32_t)(int32_t)((int64_t)vt_pos - (int64_t)table));
  return (fb_ref)table;
}

const uint8_t* fb_finish(fb_builder* b, fb_ref root, const char identifier[4], size_t* size) {
  fb_prealign(b, 8, b->minalign);
  fb_push(b, identifier, 4);
  fb_push_ref(b, root);
  if (b->failed) return NULL;
  *size = fb_size(b);
  return b->buf + b->head;
}
