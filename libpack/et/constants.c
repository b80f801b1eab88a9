/* Constant resolution for XNNPACK graphs, in ExecuTorch's order (EXECUTORCH_FORMAT.md section 3),
 * and the identity a constant is cached under (IDENTITY.md). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <xxhash.h>

#include "common/error.h"
#include "et/et_internal.h"
#include "et/xnn_graph_internal.h"

const char* xpack_et_constant_source_name(xpack_et_constant_source source) {
  switch (source) {
    case XPACK_ET_CONSTANT_NONE: return "none";
    case XPACK_ET_CONSTANT_LEGACY_BUFFER: return "legacy";
    case XPACK_ET_CONSTANT_BLOB: return "blob";
    case XPACK_ET_CONSTANT_PTD: return "ptd";
    case XPACK_ET_CONSTANT_PTE_NAMED_DATA: return "pte named_data";
  }
  return "unknown";
}

/* Keys are arbitrary bytes: show at most a prefix in messages. */
#define KEY_SHOWN(len) ((int)((len) > 160 ? 160 : (len)))

static xpack_status resolve_named(const xpack_et_xnn_graph* g, uint32_t idx, const xpack_et_xnn_constant_entry* e,
                                  const xpack_et_named_sources* src, xpack_et_constant* out, xpack_error* err) {
  out->named_key = e->named_key;
  out->named_key_len = e->named_key_len;
  const xpack_et_ptd_entry* found = NULL;
  size_t found_in = 0;
  for (size_t i = 0; src && i < src->ptd_count; i++) {
    const xpack_et_ptd_entry* hit = xpack_et_ptd_find(src->ptds[i], e->named_key, e->named_key_len);
    if (!hit) continue;
    if (found) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: constant_data[%u].named_key \"%.*s\" is in both %s and %s",
                     g->name, (unsigned)idx, KEY_SHOWN(e->named_key_len), e->named_key,
                     xpack_et_ptd_get_info(src->ptds[found_in])->name, xpack_et_ptd_get_info(src->ptds[i])->name);
    }
    found = hit;
    found_in = i;
  }
  /* A key in a .ptd and in the program's named_data is the .ptd's: ExecuTorch's MergedDataMap asks the external
   * map first, and its duplicate check asks the program's map for a layout, which that map never has (1.4 and
   * main of 2026-08-22 alike), so the program's copy is never read. */
  const xpack_et_named_data* in_pte = found == NULL && src && src->program
                                          ? xpack_et_program_find_named(src->program, e->named_key, e->named_key_len)
                                          : NULL;
  if (found) {
    /* Whether a .ptd served any delegate is the tool's to tell (a .ptd of another export is read and unused). */
    atomic_store_explicit(&((xpack_et_ptd*)src->ptds[found_in])->named, 1, memory_order_relaxed);
    out->source = XPACK_ET_CONSTANT_PTD;
    out->data = found->data;
    out->size = found->size;
    out->ptd_index = found_in;
  } else if (in_pte) {
    out->source = XPACK_ET_CONSTANT_PTE_NAMED_DATA;
    out->data = in_pte->data;
    out->size = in_pte->size;
  } else {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: constant_data[%u].named_key \"%.*s\" is in none of the %zu .ptd file(s) nor the program's "
                   "named_data (missing .ptd?)",
                      g->name, (unsigned)idx, KEY_SHOWN(e->named_key_len), e->named_key, src ? src->ptd_count : 0);
  }
  /* ExecuTorch serves the whole named segment; the graph's own size must fit in it. */
  if (e->size > out->size) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: constant_data[%u] wants %llu bytes but named data \"%.*s\" holds %zu", g->name,
                   (unsigned)idx, (unsigned long long)e->size, KEY_SHOWN(e->named_key_len), e->named_key, out->size);
  }
  return XPACK_OK;
}

xpack_status xpack_et_xnn_resolve_constant(const xpack_et_xnn_graph* g, uint32_t idx,
                                           const xpack_et_named_sources* sources, xpack_et_constant* out,
                                           xpack_error* err) {
  if (!g || !out) return xp_fail(err, XPACK_ERR_ARG, "xpack_et_xnn_resolve_constant: NULL graph or out");
  memset(out, 0, sizeof *out);
  if (idx == 0) return XPACK_OK;
  if (!g->has_header) {
    const xp_xnn_graph* impl = xp_xnn_graph_impl(g);
    if (idx >= g->legacy_constant_buffer_count) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT,
                     "%s: constant index %u but the legacy constant_buffer has %zu entries (blob has no XH00 header)",
                     g->name, (unsigned)idx, g->legacy_constant_buffer_count);
    }
    out->source = XPACK_ET_CONSTANT_LEGACY_BUFFER;
    out->data = impl->legacy_data[idx];
    out->size = impl->legacy_size[idx];
    return XPACK_OK;
  }
  if (idx >= g->constant_entry_count) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: constant index %u but constant_data has %zu entries", g->name,
                   (unsigned)idx, g->constant_entry_count);
  }
  const xpack_et_xnn_constant_entry* e = &g->constant_entries[idx];
  if (e->named_key) return resolve_named(g, idx, e, sources, out, err);
  if (e->offset > g->constant_data_size || e->size > g->constant_data_size - e->offset) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: constant_data[%u] = [%llu, +%llu) runs past the %llu-byte constant region", g->name,
                   (unsigned)idx, (unsigned long long)e->offset, (unsigned long long)e->size,
                      (unsigned long long)g->constant_data_size);
  }
  out->source = XPACK_ET_CONSTANT_BLOB;
  out->data = e->size ? g->constant_data + e->offset : NULL;
  out->size = (size_t)e->size;
  return XPACK_OK;
}

#define IDENTITY_PREFIX "xpack:xxh3-128:"
#define NAMED_CONTENT_SEPARATOR "#xxh3-128:"

/* ExecuTorch's exporter names XNNPACK constants by the SHA-256 of their bytes ("scale_"-prefixed or not
 * for quantization scales): such a key already names the content. Any other key (a module path, say) may
 * name different bytes in another program, so the identity must carry the content hash as well. */
static bool is_content_key(const char* key, size_t len) {
  static const char kScalePrefix[] = "scale_";
  if (len == 64 + sizeof kScalePrefix - 1 && memcmp(key, kScalePrefix, sizeof kScalePrefix - 1) == 0) {
    key += sizeof kScalePrefix - 1;
    len -= sizeof kScalePrefix - 1;
  }
  if (len != 64) return false;
  for (size_t i = 0; i < len; i++) {
    char ch = key[i];
    if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return false;
  }
  return true;
}

bool xpack_et_identity_reads_bytes(const char* named_key, size_t named_key_len) {
  return named_key == NULL || !is_content_key(named_key, named_key_len);
}

void xp_et_hex(const uint8_t* bytes, size_t n, char* out) {
  static const char kDigits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  out[2 * n] = 0;
}

static void hex_of(XXH128_hash_t h, char hex[33]) {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, h);
  xp_et_hex(c.digest, sizeof c.digest, hex);
}

static XXH128_hash_t hash_of(const uint8_t* data, size_t size) {
  static const uint8_t empty[1];
  return XXH3_128bits(size ? (const void*)data : (const void*)empty, size);
}

/* The identity of a constant whose key does not name its content, from the hash of its bytes. */
static xpack_status format_hashed(XXH128_hash_t hash, size_t size, const char* named_key, size_t named_key_len,
                                  char* out, size_t out_size, size_t* out_len, xpack_error* err) {
  char hex[33];
  hex_of(hash, hex);
  int n;
  if (named_key) { /* memcpy, not %s: a key may hold any bytes */
    char suffix[80];
    int m = snprintf(suffix, sizeof suffix, NAMED_CONTENT_SEPARATOR "%s:%zu", hex, size);
    n = (int)(named_key_len + (size_t)m);
    if ((size_t)n < out_size) {
      memcpy(out, named_key, named_key_len);
      memcpy(out + named_key_len, suffix, (size_t)m + 1);
    }
  } else {
    n = snprintf(out, out_size, IDENTITY_PREFIX "%s:%zu", hex, size);
  }
  if (n < 0 || (size_t)n >= out_size) {
    if (out_size) out[0] = 0;
    return xp_fail(err, XPACK_ERR_ARG, "xpack_et_constant_identity: output of %zu bytes is too small (need %d)",
                   out_size, n + 1);
  }
  if (out_len) *out_len = (size_t)n;
  return XPACK_OK;
}

/* A content-naming key is the identity itself. */
static xpack_status copy_key(const char* named_key, size_t named_key_len, char* out, size_t out_size, size_t* out_len,
                             xpack_error* err) {
  if (named_key_len >= out_size) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_et_constant_identity: key of %zu bytes needs %zu bytes of output, got %zu",
                   named_key_len, named_key_len + 1, out_size);
  }
  memcpy(out, named_key, named_key_len);
  out[named_key_len] = 0;
  if (out_len) *out_len = named_key_len;
  return XPACK_OK;
}

xpack_status xpack_et_constant_identity(const uint8_t* data, size_t size, const char* named_key, size_t named_key_len,
                                        char* out, size_t out_size, size_t* out_len, xpack_error* err) {
  if (!out) return xp_fail(err, XPACK_ERR_ARG, "xpack_et_constant_identity: NULL output");
  if (!xpack_et_identity_reads_bytes(named_key, named_key_len)) {
    return copy_key(named_key, named_key_len, out, out_size, out_len, err);
  }
  if (!data && size) return xp_fail(err, XPACK_ERR_ARG, "xpack_et_constant_identity: NULL data");
  return format_hashed(hash_of(data, size), size, named_key, named_key_len, out, out_size, out_len, err);
}

xp_et_holder xp_et_holder_of(const xpack_et_named_sources* sources, const uint8_t* data, size_t size) {
  const xpack_et_program* program = sources->program;
  if (program != NULL && xp_et_map_holds(&program->map, data, size)) {
    return (xp_et_holder){&program->map, (xp_et_hash_memo*)&program->hashes};
  }
  for (size_t i = 0; i < sources->ptd_count; i++) {
    const xpack_et_ptd* ptd = sources->ptds[i];
    if (ptd != NULL && xp_et_map_holds(&ptd->map, data, size)) {
      return (xp_et_holder){&ptd->map, (xp_et_hash_memo*)&ptd->hashes};
    }
  }
  return (xp_et_holder){NULL, NULL};
}

xpack_status xpack_et_constant_identity_of(const xpack_et_named_sources* sources, const xpack_et_constant* c,
                                           char* out, size_t out_size, size_t* out_len, xpack_error* err) {
  if (!c || !out) return xp_fail(err, XPACK_ERR_ARG, "xpack_et_constant_identity_of: NULL constant or output");
  const char* key = c->named_key;
  const size_t key_len = key ? c->named_key_len : 0;
  if (!xpack_et_identity_reads_bytes(key, key_len)) return copy_key(key, key_len, out, out_size, out_len, err);
  if (!c->data && c->size) return xp_fail(err, XPACK_ERR_ARG, "xpack_et_constant_identity_of: NULL data");
  xp_et_hash_memo* memo = sources && c->size ? xp_et_holder_of(sources, c->data, c->size).memo : NULL;
  const XXH128_hash_t hash = memo ? xp_et_memo_hash(memo, c->data, c->size) : hash_of(c->data, c->size);
  return format_hashed(hash, c->size, key, key_len, out, out_size, out_len, err);
}
