/* The checks of a cache file that opening its view leaves out: see cache_checks.h. */
#include "cachefile/cache_checks.h"

#include <stdarg.h>
#include <stdio.h>
#include <xxhash.h>

#include "cachefile/region_place.h"
#include "common/le.h"
#include "xpc_format.h"

void xp_checker_init(xp_checker* c, const xp_view* v, xp_problem_fn fn, void* context) {
  *c = (xp_checker){v, fn, context, 0, 0};
}

void xp_problem(xp_checker* c, const char* where_fmt, uint64_t where_arg, const char* what_fmt, ...) {
  if (c->stopped) return;
  char where[128], what[384];
  snprintf(where, sizeof where, where_fmt, (unsigned long long)where_arg);
  va_list ap;
  va_start(ap, what_fmt);
  vsnprintf(what, sizeof what, what_fmt, ap);
  va_end(ap);
  c->problems++;
  if (c->fn != NULL && c->fn(c->context, where, what) != 0) c->stopped = 1;
}

void xp_check_tables(xp_checker* c) {
  const xp_view* v = c->v;
  if (XXH3_64bits(v->base + v->metadata_offset, (size_t)v->metadata_size) != v->metadata_hash) {
    xp_problem(c, "metadata area at offset %llu", v->metadata_offset,
                "XXH3-64 does not match the footer's metadata checksum");
  }
  for (uint32_t i = 0; i < v->dir_count && !c->stopped; i++) {
    const uint8_t* d = v->base + v->dir_offset + (uint64_t)i * XPC_DIR_ENTRY_SIZE;
    const uint64_t offset = xp_le64(d + XPC_D_OFFSET);
    const uint64_t bytes = xp_le64(d + XPC_D_COUNT) * xp_le32(d + XPC_D_RECORD_SIZE); /* bounded at open */
    if (XXH3_64bits(v->base + offset, (size_t)bytes) != xp_le64(d + XPC_D_HASH)) {
      char tag[5], where[64];
      xp_tag_text(xp_le32(d + XPC_D_TAG), tag);
      snprintf(where, sizeof where, "table %s at offset %%llu", tag);
      xp_problem(c, where, offset, "XXH3-64 does not match its directory entry");
    }
  }
}

void xp_check_regions(xp_checker* c, xp_region_fn region_fn, void* region_context) {
  const xp_view* v = c->v;
  const int transport = (v->flags & XPC_FLAG_TRANSPORT) != 0;
  const uint64_t data_end = v->data_offset + v->data_size;
  uint64_t previous_end = v->data_offset;
  for (uint64_t i = 0; i < v->regions.count && !c->stopped; i++) {
    xp_region r;
    xp_view_region(v, i, &r);
    char where[96];
    snprintf(where, sizeof where, "region %llu at offset %%llu", (unsigned long long)i);
    if (transport && (r.stored_size == 0 || !xp_region_is_sound(v, &r))) {
      xp_problem(c, where, r.offset, "size %llu, frame of %llu bytes: must be non-empty and end inside the data area "
                  "[%llu, +%llu)", (unsigned long long)r.size, (unsigned long long)r.stored_size,
                  (unsigned long long)v->data_offset, (unsigned long long)v->data_size);
      continue;
    }
    if (!transport && !xp_region_is_sound(v, &r)) {
      xp_problem(c, where, r.offset,
                  "size %llu (stored %llu) lies outside the data area [%llu, +%llu) or is misaligned",
                  (unsigned long long)r.size, (unsigned long long)r.stored_size, (unsigned long long)v->data_offset,
                  (unsigned long long)v->data_size);
      continue;
    }
    if (r.offset < previous_end) {
      xp_problem(c, where, r.offset, "overlaps the previous region (which ends at %llu)",
                  (unsigned long long)previous_end);
    } else if (transport && r.offset != previous_end) {
      xp_problem(c, where, r.offset, "expected at offset %llu, right after the previous frame (the transport form "
                  "has no gaps)", (unsigned long long)previous_end);
    }
    previous_end = r.offset + r.stored_size;
    if (region_fn != NULL && !c->stopped) region_fn(region_context, c, i, &r, where);
  }
  if (transport && (v->data_offset != XPC_HEADER_SIZE || previous_end != data_end ||
                    v->metadata_offset != xp_align_up(data_end, 8))) {
    xp_problem(c, "data area at offset %llu", v->data_offset,
                "the transport form's frames start at 64 and fill the data area exactly, and the metadata starts at "
                "the next multiple of 8; the frames end at %llu, the data area at %llu, the metadata starts at %llu",
                (unsigned long long)previous_end, (unsigned long long)data_end,
                (unsigned long long)v->metadata_offset);
  }
}

static int string_ok(const xp_view* v, uint32_t offset, const char** s, uint32_t* len) {
  return xp_view_string(v, offset, s, len) == 0;
}

void xp_check_entries(xp_checker* c) {
  const xp_view* v = c->v;
  uint64_t previous_hash = 0;
  for (uint64_t i = 0; i < v->entries.count && !c->stopped; i++) {
    xp_entry e;
    xp_view_entry(v, i, &e);
    char where[96];
    snprintf(where, sizeof where, "entry %llu at offset %%llu", (unsigned long long)i);
    const uint64_t at = v->entries.offset + i * v->entries.record_size;
    const char *kernel, *bias = NULL;
    uint32_t kernel_len, bias_len = 0;
    int strings = 1;
    if (!string_ok(v, e.kernel, &kernel, &kernel_len)) {
      xp_problem(c, where, at, "kernel identity offset %u is not a string of STRS", e.kernel);
      strings = 0;
    }
    if (e.bias != XPC_NONE && !string_ok(v, e.bias, &bias, &bias_len)) {
      xp_problem(c, where, at, "bias identity offset %u is not a string of STRS", e.bias);
      strings = 0;
    }
    if (strings && xp_key_hash(e.seed, kernel, kernel_len, bias, bias_len) != e.key_hash) {
      xp_problem(c, where, at, "key_hash %016llx does not match its seed and identities",
                  (unsigned long long)e.key_hash);
    }
    if (i > 0 && e.key_hash < previous_hash) xp_problem(c, where, at, "entries are not in ascending key_hash order");
    previous_hash = e.key_hash;
    if (e.family != XPC_NONE && e.family >= v->families.count) {
      xp_problem(c, where, at, "family index %u, the file has %llu families", e.family,
                  (unsigned long long)v->families.count);
    } else if (e.family == XPC_NONE && v->minor >= 1) {
      xp_problem(c, where, at, "names no packing family (required since format 1.1)");
    }
    if (e.region >= v->regions.count) {
      xp_problem(c, where, at, "region index %u, the file has %llu regions", e.region,
                  (unsigned long long)v->regions.count);
      continue;
    }
    xp_region r;
    xp_view_region(v, e.region, &r);
    if (xp_entry_check(v, i, &r) != e.check) {
      xp_problem(c, where, at, "check value does not match the entry and its region record (region %u)", e.region);
    }
  }
}

void xp_check_small_tables(xp_checker* c) {
  const xp_view* v = c->v;
  const char* s;
  uint32_t len;
  for (uint64_t i = 0; i < v->provenance.count && !c->stopped; i++) {
    const uint8_t* p = v->base + v->provenance.offset + i * v->provenance.record_size;
    const uint32_t kind = xp_le32(p + XPC_P_KIND);
    if (!string_ok(v, xp_le32(p + XPC_P_NAME), &s, &len)) {
      xp_problem(c, "provenance record %llu", i, "name is not a string of STRS");
    }
    if (kind < XPC_INPUT_PTE || kind > XPC_INPUT_OTHER) {
      xp_problem(c, "provenance record %llu", i, "kind %u unknown", kind);
    }
  }
  for (uint64_t i = 0; i < v->info.count && !c->stopped; i++) {
    const uint8_t* p = v->base + v->info.offset + i * v->info.record_size;
    if (!string_ok(v, xp_le32(p + XPC_I_KEY), &s, &len) || !string_ok(v, xp_le32(p + XPC_I_VALUE), &s, &len)) {
      xp_problem(c, "info record %llu", i, "key or value is not a string of STRS");
    }
  }
  for (uint64_t i = 0; i < v->families.count && !c->stopped; i++) {
    const uint8_t* p = v->base + v->families.offset + i * v->families.record_size;
    if (!string_ok(v, xp_le32(p + XPC_M_NAME), &s, &len)) {
      xp_problem(c, "family record %llu", i, "name is not a string of STRS");
    }
  }
}

void xp_check_all(xp_checker* c) {
  xp_check_tables(c);
  xp_check_regions(c, NULL, NULL);
  xp_check_entries(c);
  xp_check_small_tables(c);
}

typedef struct first_problem {
  const char* name;
  xpack_error* err;
} first_problem;

static int keep_first(void* context, const char* where, const char* what) {
  first_problem* f = context;
  xp_fail(f->err, XPACK_ERR_CORRUPT, "%s: %s: %s", f->name, where, what);
  return 1;
}

xpack_status xp_check_first(const xp_view* v, const char* name, xpack_error* err) {
  first_problem first = {name, err};
  xp_checker c;
  xp_checker_init(&c, v, keep_first, &first);
  xp_check_all(&c);
  return c.problems == 0 ? XPACK_OK : XPACK_ERR_CORRUPT;
}
