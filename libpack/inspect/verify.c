/* Full structural verification of a cache file: everything open checks, plus every checksum and record. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "cachefile/cache_open.h"
#include "common/error.h"
#include "common/le.h"
#include "transport/transport.h"
#include "xpack.h"
#include "xpc_format.h"

typedef struct checker {
  const xpc_view* v;
  xpack_problem_fn fn;
  void* context;
  uint64_t problems;
} checker;

static void problem(checker* c, const char* where_fmt, uint64_t where_arg, const char* what_fmt, ...)
    XPACK_PRINTF(4, 5);

static void problem(checker* c, const char* where_fmt, uint64_t where_arg, const char* what_fmt, ...) {
  char where[128], what[384];
  snprintf(where, sizeof where, where_fmt, (unsigned long long)where_arg);
  va_list ap;
  va_start(ap, what_fmt);
  vsnprintf(what, sizeof what, what_fmt, ap);
  va_end(ap);
  c->problems++;
  if (c->fn) c->fn(c->context, where, what);
}

static void check_tables(checker* c) {
  const xpc_view* v = c->v;
  if (XXH3_64bits(v->base + v->metadata_offset, (size_t)v->metadata_size) != v->metadata_hash) {
    problem(c, "metadata area at offset %llu", v->metadata_offset,
            "XXH3-64 does not match the footer's metadata checksum");
  }
  const xpc_table* tables[] = {&v->regions, &v->entries, &v->strings, &v->provenance,
                               &v->build_id, &v->info, &v->families};
  static const char* names[] = {"REGN", "ENTR", "STRS", "PROV", "BLDI", "INFO", "FAMI"};
  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
    const xpc_table* t = tables[i];
    if (XXH3_64bits(v->base + t->offset, (size_t)(t->count * t->record_size)) != t->hash) {
      char where[64];
      snprintf(where, sizeof where, "table %s at offset %%llu", names[i]);
      problem(c, where, t->offset, "XXH3-64 does not match its directory entry");
    }
  }
}

/* A transport-form region: its zstd frame decoded (into nothing) and the result hashed. */
static void check_frame(checker* c, xt_decoder* decoder, const xpc_region* r, const char* where) {
  if (decoder->dctx == NULL) {
    problem(c, where, r->offset, "not decoded: no memory for a zstd decompression context");
    return;
  }
  char what[256];
  if (xt_decode_region(decoder, c->v, r, NULL, 0, what, sizeof what, NULL) != XPACK_OK) {
    problem(c, where, r->offset, "%s", what);
  }
}

static void check_regions(checker* c) {
  const xpc_view* v = c->v;
  uint64_t previous_end = v->data_offset;
  xt_decoder decoder = {0};
  if (v->flags & XPC_FLAG_TRANSPORT) xt_decoder_init(&decoder, NULL);
  for (uint64_t i = 0; i < v->regions.count; i++) {
    xpc_region r;
    xpc_view_region(v, i, &r);
    char where[96];
    snprintf(where, sizeof where, "region %llu at offset %%llu", (unsigned long long)i);
    if (!xpc_region_is_sound(v, &r)) {
      problem(c, where, r.offset, "size %llu (stored %llu) lies outside the data area [%llu, +%llu) or is misaligned",
              (unsigned long long)r.size, (unsigned long long)r.stored_size, (unsigned long long)v->data_offset,
              (unsigned long long)v->data_size);
      continue;
    }
    if (r.offset < previous_end) {
      problem(c, where, r.offset, "overlaps the previous region (which ends at %llu)",
              (unsigned long long)previous_end);
    } else if ((v->flags & XPC_FLAG_TRANSPORT) && r.offset != previous_end) {
      problem(c, where, r.offset, "the transport form has no gaps: expected at offset %llu",
              (unsigned long long)previous_end);
    }
    previous_end = r.offset + r.stored_size;
    if (v->flags & XPC_FLAG_TRANSPORT) {
      check_frame(c, &decoder, &r, where);
      continue;
    }
    uint64_t h = XXH3_64bits(v->base + r.offset, (size_t)r.size);
    if (h != r.hash) {
      problem(c, where, r.offset, "XXH3-64 of its %llu bytes is %016llx, the record says %016llx",
              (unsigned long long)r.size, (unsigned long long)h, (unsigned long long)r.hash);
    }
  }
  xt_decoder_free(&decoder);
  if ((v->flags & XPC_FLAG_TRANSPORT) &&
      (v->data_offset != XPC_HEADER_SIZE || previous_end != v->data_offset + v->data_size)) {
    problem(c, "data area at offset %llu", v->data_offset,
            "the transport form's frames start at 64 and fill the data area exactly; they end at %llu",
            (unsigned long long)previous_end);
  }
}

static int string_ok(const xpc_view* v, uint32_t offset, const char** s, uint32_t* len) {
  return xpc_view_string(v, offset, s, len) == 0;
}

static void check_entries(checker* c) {
  const xpc_view* v = c->v;
  uint64_t previous_hash = 0;
  for (uint64_t i = 0; i < v->entries.count; i++) {
    xpc_entry e;
    xpc_view_entry(v, i, &e);
    char where[96];
    snprintf(where, sizeof where, "entry %llu at offset %%llu", (unsigned long long)i);
    uint64_t at = v->entries.offset + i * v->entries.record_size;
    const char *kernel, *bias = NULL;
    uint32_t kernel_len, bias_len = 0;
    int strings = 1;
    if (!string_ok(v, e.kernel, &kernel, &kernel_len)) {
      problem(c, where, at, "kernel identity offset %u is not a string of STRS", e.kernel);
      strings = 0;
    }
    if (e.bias != XPC_NONE && !string_ok(v, e.bias, &bias, &bias_len)) {
      problem(c, where, at, "bias identity offset %u is not a string of STRS", e.bias);
      strings = 0;
    }
    if (strings && xpc_key_hash(e.seed, kernel, kernel_len, bias, bias_len) != e.key_hash) {
      problem(c, where, at, "key_hash %016llx does not match its seed and identities",
              (unsigned long long)e.key_hash);
    }
    if (i > 0 && e.key_hash < previous_hash) problem(c, where, at, "entries are not in ascending key_hash order");
    previous_hash = e.key_hash;
    if (e.family != XPC_NONE && e.family >= v->families.count) {
      problem(c, where, at, "family index %u, the file has %llu families", e.family,
              (unsigned long long)v->families.count);
    } else if (e.family == XPC_NONE && v->minor >= 1) {
      problem(c, where, at, "names no packing family (required since format 1.1)");
    }
    if (e.region >= v->regions.count) {
      problem(c, where, at, "region index %u, the file has %llu regions", e.region,
              (unsigned long long)v->regions.count);
      continue;
    }
    xpc_region r;
    xpc_view_region(v, e.region, &r);
    if (xpc_entry_check(v, i, &r) != e.check) {
      problem(c, where, at, "check value does not match the entry and its region record (region %u)", e.region);
    }
  }
}

static void check_small_tables(checker* c) {
  const xpc_view* v = c->v;
  const char* s;
  uint32_t len;
  for (uint64_t i = 0; i < v->provenance.count; i++) {
    const uint8_t* p = v->base + v->provenance.offset + i * v->provenance.record_size;
    uint32_t kind = xp_le32(p + XPC_P_KIND);
    if (!string_ok(v, xp_le32(p + XPC_P_NAME), &s, &len)) {
      problem(c, "provenance record %llu", i, "name is not a string of STRS");
    }
    if (kind < XPC_INPUT_PTE || kind > XPC_INPUT_OTHER) problem(c, "provenance record %llu", i, "kind %u unknown", kind);
  }
  for (uint64_t i = 0; i < v->info.count; i++) {
    const uint8_t* p = v->base + v->info.offset + i * v->info.record_size;
    if (!string_ok(v, xp_le32(p + XPC_I_KEY), &s, &len) || !string_ok(v, xp_le32(p + XPC_I_VALUE), &s, &len)) {
      problem(c, "info record %llu", i, "key or value is not a string of STRS");
    }
  }
  for (uint64_t i = 0; i < v->families.count; i++) {
    const uint8_t* p = v->base + v->families.offset + i * v->families.record_size;
    if (!string_ok(v, xp_le32(p + XPC_M_NAME), &s, &len)) {
      problem(c, "family record %llu", i, "name is not a string of STRS");
    }
  }
}

xpack_status xpack_verify_file(const char* path, xpack_problem_fn fn, void* context, uint64_t* problem_count,
                               xpack_error* err) {
  if (problem_count) *problem_count = 0;
  xpc_file file;
  xpack_status st = xpc_file_open(&file, path, 1, err);
  if (st != XPACK_OK) {
    if (st != XPACK_ERR_IO) { /* the file was read: what is wrong with it is its one problem */
      if (fn) fn(context, path, err ? err->message : xpack_status_name(st));
      if (problem_count) *problem_count = 1;
    }
    return st;
  }
  checker c = {&file.view, fn, context, 0};
  check_tables(&c);
  check_regions(&c);
  check_entries(&c);
  check_small_tables(&c);
  if (problem_count) *problem_count = c.problems;
  xpc_file_close(&file);
  return XPACK_OK;
}
