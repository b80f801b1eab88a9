/* The checks of a cache file that opening its view leaves out: see cache_checks.h. */
#include "cachefile/cache_checks.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cachefile/region_place.h"
#include "common/le.h"
#include "xpc_format.h"

void xp_checker_init(xp_checker* c, const xp_view* v, xp_problem_fn fn, void* context) {
  *c = (xp_checker){v, fn, context, 0, 0};
}

static void report(xp_checker* c, const char* where, const char* what_fmt, va_list ap) {
  char what[384];
  vsnprintf(what, sizeof what, what_fmt, ap);
  c->problems++;
  if (c->fn != NULL && c->fn(c->context, where, what) != 0) c->stopped = 1;
}

void xp_problem(xp_checker* c, const char* where_fmt, uint64_t where_arg, const char* what_fmt, ...) {
  if (c->stopped) return;
  char where[128];
  snprintf(where, sizeof where, where_fmt, (unsigned long long)where_arg);
  va_list ap;
  va_start(ap, what_fmt);
  report(c, where, what_fmt, ap);
  va_end(ap);
}

/* A table's problem, where named by its tag: the file's bytes, never part of a format (a crafted tag "%s%s" once
 * crashed verify, export and inflate). */
static void table_problem(xp_checker* c, const uint8_t* dir_entry, uint64_t offset, const char* what_fmt, ...)
    XPACK_PRINTF(4, 5);
static void table_problem(xp_checker* c, const uint8_t* dir_entry, uint64_t offset, const char* what_fmt, ...) {
  if (c->stopped) return;
  char tag[5], where[128];
  xp_tag_text(xp_le32(dir_entry + XPC_D_TAG), tag);
  snprintf(where, sizeof where, "table %s at offset %llu", tag, (unsigned long long)offset);
  va_list ap;
  va_start(ap, what_fmt);
  report(c, where, what_fmt, ap);
  va_end(ap);
}

/* The first nonzero byte of [offset, offset + n), or UINT64_MAX when all are zero. */
static uint64_t first_nonzero(const xp_view* v, uint64_t offset, uint64_t n) {
  for (uint64_t i = 0; i < n; i++) {
    if (v->base[offset + i] != 0) return offset + i;
  }
  return UINT64_MAX;
}

/* Padding [offset, offset + n) must be zero bytes (FORMAT.md 2, 4, 5). */
static void check_padding(xp_checker* c, const char* what, uint64_t offset, uint64_t n) {
  const uint64_t at = first_nonzero(c->v, offset, n);
  if (at != UINT64_MAX) {
    xp_problem(c, "padding at offset %llu", at, "byte %#x in the zero padding %s [%llu, +%llu)", c->v->base[at],
               what, (unsigned long long)offset, (unsigned long long)n);
  }
}

/* Fields this version reserves: zero in files of this version or older (a later minor may define them). */
static void check_reserved(xp_checker* c) {
  const xp_view* v = c->v;
  if (v->minor > XPC_VERSION_MINOR) return;
  if (xp_le16(v->base + XPC_H_RESERVED0) != 0) {
    xp_problem(c, "header at offset %llu", 0, "the reserved u16 at offset %d is %#x, expected 0", XPC_H_RESERVED0,
               xp_le16(v->base + XPC_H_RESERVED0));
  }
  if (xp_le64(v->base + XPC_H_RESERVED1) != 0) {
    xp_problem(c, "header at offset %llu", 0, "the reserved u64 at offset %d is %#llx, expected 0", XPC_H_RESERVED1,
               (unsigned long long)xp_le64(v->base + XPC_H_RESERVED1));
  }
}

/* arch is the ELF e_machine of the CPU that packed the file; 0 (EM_NONE) names none. The loader refuses such a
 * file whole anyway (no CPU it runs on has it), so only verify can say why. */
static void check_arch(xp_checker* c) {
  if (c->v->arch == 0) {
    xp_problem(c, "header at offset %llu", XPC_H_ARCH, "arch 0 (EM_NONE) names no CPU: expected the ELF e_machine "
               "of the packing CPU (FORMAT.md 3)");
  }
}

/* A file of this version or older holds this version's tables and no other, in the writer's order, each of the
 * record size FORMAT.md 5.1 gives (a later minor may add tables or grow records; readers skip what they do
 * not know, so only verify tells such a file from one a writer of its version wrote). */
static void check_table_set(xp_checker* c) {
  const xp_view* v = c->v;
  if (v->minor > XPC_VERSION_MINOR) return;
  enum { MAX_TABLES = 16 };
  uint32_t tags[MAX_TABLES], sizes[MAX_TABLES];
  const size_t known = xp_known_tables(tags, sizes, MAX_TABLES);
  for (uint32_t i = 0; i < v->dir_count && !c->stopped; i++) {
    const uint8_t* d = v->base + v->dir_offset + (uint64_t)i * XPC_DIR_ENTRY_SIZE;
    char tag[5], expected[5], where[64];
    xp_tag_text(xp_le32(d + XPC_D_TAG), tag);
    snprintf(where, sizeof where, "table directory entry %u at offset %%llu", i);
    const uint64_t at = v->dir_offset + (uint64_t)i * XPC_DIR_ENTRY_SIZE;
    if (i >= known) {
      xp_problem(c, where, at, "table %s: a file of version 1.%u has %zu tables", tag, v->minor, known);
      return;
    }
    xp_tag_text(tags[i], expected);
    if (xp_le32(d + XPC_D_TAG) != tags[i]) {
      xp_problem(c, where, at, "table %s where %s comes: the writer's order (FORMAT.md 5.1) in a file of "
                 "version 1.%u", tag, expected, v->minor);
      return;
    }
    if (xp_le32(d + XPC_D_RECORD_SIZE) != sizes[i]) {
      xp_problem(c, where, at, "table %s record_size %u, expected %u in a file of version 1.%u", tag,
                 xp_le32(d + XPC_D_RECORD_SIZE), sizes[i], v->minor);
    }
  }
}

/* The metadata area as the writer lays it out (FORMAT.md 5, 9.1): the tables in directory order, the first at
 * metadata_offset, each at the next multiple of 8 after the one before, then the directory likewise, which
 * ends where the footer starts; zero bytes between. */
static void check_metadata_layout(xp_checker* c) {
  const xp_view* v = c->v;
  uint64_t cursor = v->metadata_offset;
  for (uint32_t i = 0; i < v->dir_count && !c->stopped; i++) {
    const uint8_t* d = v->base + v->dir_offset + (uint64_t)i * XPC_DIR_ENTRY_SIZE;
    const uint64_t offset = xp_le64(d + XPC_D_OFFSET);
    const uint64_t bytes = xp_le64(d + XPC_D_COUNT) * xp_le32(d + XPC_D_RECORD_SIZE); /* bounded at open */
    const uint64_t expected = xp_align_up(cursor, 8);
    if (offset != expected) {
      table_problem(c, d, offset, "expected at offset %llu: tables follow one another in directory order, each at "
                    "the next multiple of 8", (unsigned long long)expected);
      return;
    }
    check_padding(c, "between tables", cursor, offset - cursor);
    cursor = offset + bytes;
  }
  if (!c->stopped && v->dir_offset != xp_align_up(cursor, 8)) {
    xp_problem(c, "table directory at offset %llu", v->dir_offset,
               "expected at offset %llu, the next multiple of 8 after the last table",
               (unsigned long long)xp_align_up(cursor, 8));
  } else if (!c->stopped) {
    check_padding(c, "before the table directory", cursor, v->dir_offset - cursor);
    /* Bytes after it would be in no part of the file, unchecked by any checksum but the metadata area's. */
    const uint64_t dir_end = v->dir_offset + (uint64_t)v->dir_count * XPC_DIR_ENTRY_SIZE;
    const uint64_t footer_start = v->metadata_offset + v->metadata_size;
    if (!c->stopped && dir_end != footer_start) {
      xp_problem(c, "table directory at offset %llu", v->dir_offset,
                 "ends at offset %llu, expected to end where the footer starts (offset %llu)",
                 (unsigned long long)dir_end, (unsigned long long)footer_start);
    }
  }
}

void xp_check_tables(xp_checker* c) {
  const xp_view* v = c->v;
  const uint64_t metadata_hash = XXH3_64bits(v->base + v->metadata_offset, (size_t)v->metadata_size);
  if (metadata_hash != v->metadata_hash) {
    xp_problem(c, "metadata area at offset %llu", v->metadata_offset,
               "XXH3-64 of its %llu bytes is %016llx, the footer's metadata checksum %016llx",
               (unsigned long long)v->metadata_size, (unsigned long long)metadata_hash,
               (unsigned long long)v->metadata_hash);
  }
  for (uint32_t i = 0; i < v->dir_count && !c->stopped; i++) {
    const uint8_t* d = v->base + v->dir_offset + (uint64_t)i * XPC_DIR_ENTRY_SIZE;
    const uint64_t offset = xp_le64(d + XPC_D_OFFSET);
    const uint64_t bytes = xp_le64(d + XPC_D_COUNT) * xp_le32(d + XPC_D_RECORD_SIZE); /* bounded at open */
    if (XXH3_64bits(v->base + offset, (size_t)bytes) != xp_le64(d + XPC_D_HASH)) {
      table_problem(c, d, offset, "XXH3-64 does not match its directory entry");
    }
  }
  check_reserved(c);
  check_arch(c);
  check_table_set(c);
  check_metadata_layout(c);
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
      xp_problem(c, where, r.offset, "size %llu, frame of %llu bytes: expected a size that is a non-zero multiple of "
                 "xnn_alignment %u and a non-empty frame inside the data area [%llu, +%llu)",
                 (unsigned long long)r.size, (unsigned long long)r.stored_size, v->xnn_alignment,
                  (unsigned long long)v->data_offset, (unsigned long long)v->data_size);
      /* As a mappable region's below: where it starts inside the data area, it still marks where the next frame
       * may start (a frame past it was once told the frames end elsewhere). */
      if (r.offset >= previous_end && r.offset < data_end) {
        previous_end = xp_fits(r.offset, r.stored_size, data_end) ? r.offset + r.stored_size : data_end;
      }
      continue;
    }
    if (!transport && !xp_region_is_sound(v, &r)) {
      xp_problem(c, where, r.offset,
                 "size %llu (stored %llu): expected equal sizes, a non-zero multiple of xnn_alignment %u, inside the "
                 "data area [%llu, +%llu), at a multiple of %llu",
                  (unsigned long long)r.size, (unsigned long long)r.stored_size, v->xnn_alignment,
                  (unsigned long long)v->data_offset, (unsigned long long)v->data_size,
                  (unsigned long long)(r.size >= v->page_alignment ? v->page_alignment
                                                                  : xp_small_region_alignment(v->xnn_alignment)));
      /* Starting inside the data area, it still marks where the next region may start: one fault, one problem. */
      if (r.offset >= previous_end && r.offset < data_end) {
        previous_end = xp_fits(r.offset, r.size, data_end) ? r.offset + r.size : data_end;
      }
      continue;
    }
    const uint64_t expected = transport ? previous_end
                                        : xp_place_region(previous_end, r.size, v->page_alignment,
                                                          xp_small_region_alignment(v->xnn_alignment));
    if (r.offset < previous_end) {
      /* Its bytes are not read: they are (part of) bytes an earlier region was read for, and N records over
       * one place would make a reader of every region's bytes read that place N times (or decode one frame
       * N times). The end only moves forward, so every region read lies past all the bytes read before. */
      xp_problem(c, where, r.offset, "overlaps the previous region (which ends at %llu)",
                 (unsigned long long)previous_end);
      if (r.offset + r.stored_size > previous_end) previous_end = r.offset + r.stored_size; /* inside the data area */
      continue;
    }
    if (transport && r.offset != expected) {
      xp_problem(c, where, r.offset, "expected at offset %llu, right after the previous frame (the transport form "
                 "has no gaps)", (unsigned long long)expected);
    } else if (r.offset != expected) {
      xp_problem(c, where, r.offset, "expected at offset %llu, the first multiple of %llu after the previous region "
                 "(FORMAT.md 4: regions are placed without spare gaps)", (unsigned long long)expected,
                 (unsigned long long)(r.size >= v->page_alignment ? v->page_alignment
                                                                  : xp_small_region_alignment(v->xnn_alignment)));
    } else {
      check_padding(c, previous_end == v->data_offset ? "before the first region" : "between regions", previous_end,
                    r.offset - previous_end);
    }
    previous_end = r.offset + r.stored_size;
    if (region_fn != NULL && !c->stopped) region_fn(region_context, c, i, &r, where);
  }
  if (!transport && !c->stopped) {
    check_padding(c, "between the header and the data area", XPC_HEADER_SIZE, v->data_offset - XPC_HEADER_SIZE);
    if (previous_end != data_end || v->metadata_offset != xp_align_up(data_end, 8)) {
      xp_problem(c, "data area at offset %llu", v->data_offset,
                 "the data area ends where the last region ends and the metadata starts at the next multiple of 8; "
                 "the regions end at %llu, the data area at %llu, the metadata starts at %llu",
                  (unsigned long long)previous_end, (unsigned long long)data_end,
                  (unsigned long long)v->metadata_offset);
    }
  }
  if (!c->stopped && v->metadata_offset >= data_end && v->metadata_offset - data_end < 8) {
    check_padding(c, "between the data area and the metadata", data_end, v->metadata_offset - data_end);
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

/* Why the bytes at STRS offset `offset` are no string (FORMAT.md 5.4), for a message. */
static const char* string_fault(const xp_view* v, uint32_t offset) {
  const char* s;
  uint32_t len;
  return xp_view_string_fault(xp_view_string(v, offset, &s, &len));
}

typedef struct entry_key {
  uint64_t key_hash;
  uint32_t seed;
  const char *kernel, *bias;
  uint32_t kernel_len, bias_len;
} entry_key;

/* FORMAT.md 5.3's order: key_hash, seed, kernel identity, bias identity (none first). */
static int compare_keys(const entry_key* a, const entry_key* b) {
  if (a->key_hash != b->key_hash) return a->key_hash < b->key_hash ? -1 : 1;
  if (a->seed != b->seed) return a->seed < b->seed ? -1 : 1;
  const int c = xp_string_order(a->kernel, a->kernel_len, b->kernel, b->kernel_len);
  return c != 0 ? c : xp_string_order(a->bias, a->bias_len, b->bias, b->bias_len);
}

/* Regions no entry names (FORMAT.md 11: a writer stores a region for the entries that share it, and only
 * then). used: one bit per region, or NULL when there was no memory for it (the rule is then not checked). */
static void check_regions_used(xp_checker* c, const uint8_t* used) {
  const xp_view* v = c->v;
  for (uint64_t r = 0; used != NULL && r < v->regions.count && !c->stopped; r++) {
    if (!(used[r / 8] & (1u << (r % 8)))) {
      xp_problem(c, "region %llu", r, "no entry names this region (record at offset %llu; a writer stores only "
                 "regions of entries)", (unsigned long long)(v->regions.offset + r * v->regions.record_size));
    }
  }
}

void xp_check_entries(xp_checker* c) {
  const xp_view* v = c->v;
  uint8_t* used = calloc((size_t)(v->regions.count / 8 + 1), 1);
  uint64_t previous_hash = 0;
  entry_key previous = {0};
  int previous_known = 0; /* the previous entry's identities are strings */
  for (uint64_t i = 0; i < v->entries.count && !c->stopped; i++) {
    xp_entry e;
    xp_view_entry(v, i, &e);
    char where[96];
    snprintf(where, sizeof where, "entry %llu at offset %%llu", (unsigned long long)i);
    const uint64_t at = v->entries.offset + i * v->entries.record_size;
    const char *kernel = NULL, *bias = NULL;
    uint32_t kernel_len = 0, bias_len = 0;
    int strings = 1;
    if (!string_ok(v, e.kernel, &kernel, &kernel_len)) {
      xp_problem(c, where, at, "kernel identity offset %u is not a string of STRS: %s", e.kernel,
                 string_fault(v, e.kernel));
      strings = 0;
    }
    if (e.bias != XPC_NONE && !string_ok(v, e.bias, &bias, &bias_len)) {
      xp_problem(c, where, at, "bias identity offset %u is not a string of STRS: %s", e.bias, string_fault(v, e.bias));
      strings = 0;
    }
    if (strings && xp_key_hash(e.seed, kernel, kernel_len, bias, bias_len) != e.key_hash) {
      xp_problem(c, where, at, "key_hash %016llx does not match its seed and identities",
                 (unsigned long long)e.key_hash);
    }
    const bool kernel_ambiguous = xp_identity_is_ambiguous(kernel, kernel_len);
    if (kernel_ambiguous || xp_identity_is_ambiguous(bias, bias_len)) {
      xp_problem(c, where, at, "its %s identity is \"%s\", which names no weight (FORMAT.md 6): no writer records it, "
                 "and no look-up finds it", kernel_ambiguous ? "kernel" : "bias", XPC_IDENTITY_AMBIGUOUS);
    }
    if (i > 0 && e.key_hash < previous_hash) xp_problem(c, where, at, "entries are not in ascending key_hash order");
    const entry_key key = {e.key_hash, e.seed, kernel, bias, kernel_len, bias_len};
    if (i > 0 && strings && previous_known && e.key_hash == previous_hash) {
      const int order = compare_keys(&previous, &key);
      if (order == 0) {
        xp_problem(c, where, at, "same (seed, kernel, bias) key as entry %llu: no two entries may share a key",
                   (unsigned long long)(i - 1));
      } else if (order > 0) {
        xp_problem(c, where, at, "entries of equal key_hash are not ordered by seed, kernel identity, then bias "
                   "identity");
      }
    }
    previous_hash = e.key_hash;
    previous = key;
    previous_known = strings;
    if ((e.flags & ~XPC_ENTRY_FLAGS_KNOWN) != 0) {
      xp_problem(c, where, at, "flags %#x: unknown bits %#x (only bit 0, PACKED_ON_INSERT, is defined)", e.flags,
                 e.flags & ~XPC_ENTRY_FLAGS_KNOWN);
    }
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
    if (used != NULL) used[e.region / 8] |= (uint8_t)(1u << (e.region % 8));
    xp_region r;
    xp_view_region(v, e.region, &r);
    const uint64_t check = xp_entry_check(v, i, &r);
    if (check != e.check) {
      xp_problem(c, where, at, "check value %016llx, expected %016llx (XXH3-64 of the entry and its region %u's record)",
                 (unsigned long long)e.check, (unsigned long long)check, e.region);
    }
  }
  if (!c->stopped) check_regions_used(c, used);
  free(used);
}

/* FAMI (FORMAT.md 5.8): names that are strings, each once and ascending, flags and reserved zero, and only
 * families some entry uses. */
static void check_families(xp_checker* c) {
  const xp_view* v = c->v;
  uint8_t used[XPC_MAX_FAMILIES] = {0}; /* families.count <= XPC_MAX_FAMILIES, checked at open */
  for (uint64_t i = 0; i < v->entries.count; i++) {
    const uint32_t family = xp_le32(v->base + v->entries.offset + i * v->entries.record_size + XPC_E_FAMILY);
    if (family < v->families.count) used[family] = 1;
  }
  if (v->minor == 0 && v->families.count != 0) {
    xp_problem(c, "FAMI table at offset %llu", v->families.offset, "%llu records in a file of version 1.0, which has "
               "none (families came with 1.1; a reader serves none of them)", (unsigned long long)v->families.count);
  }
  const char* previous = NULL;
  uint32_t previous_len = 0;
  for (uint64_t i = 0; i < v->families.count && !c->stopped; i++) {
    const uint8_t* p = v->base + v->families.offset + i * v->families.record_size;
    const uint64_t at = v->families.offset + i * v->families.record_size;
    const char* name;
    uint32_t len;
    char where[64];
    snprintf(where, sizeof where, "family record %llu at offset %%llu", (unsigned long long)i);
    if (!string_ok(v, xp_le32(p + XPC_M_NAME), &name, &len)) {
      xp_problem(c, where, at, "name is not a string of STRS: %s", string_fault(v, xp_le32(p + XPC_M_NAME)));
      name = NULL;
    } else if (previous != NULL && xp_string_order(previous, previous_len, name, len) >= 0) {
      xp_problem(c, where, at, "name \"%.*s\" %s the previous record's: names are unique and ascending",
                 (int)(len < 200 ? len : 200), name,
                 xp_string_order(previous, previous_len, name, len) == 0 ? "is the same as" : "sorts before");
    }
    previous = name, previous_len = len;
    if (xp_le32(p + XPC_M_FLAGS) != 0) {
      xp_problem(c, where, at, "flags %#x, expected 0", xp_le32(p + XPC_M_FLAGS));
    }
    if (v->minor < XPC_PROBE_KEYS_FIRST_MINOR && xp_le64(p + XPC_M_PROBE_KEYS) != 0) {
      xp_problem(c, where, at, "reserved field at record offset %d must be 0 in a file of version 1.%u",
                 XPC_M_PROBE_KEYS, v->minor);
    } else if (v->minor >= XPC_PROBE_KEYS_FIRST_MINOR && v->minor <= XPC_VERSION_MINOR &&
               xp_le64(p + XPC_M_PROBE_KEYS) == 0) {
      xp_problem(c, where, at, "probe keys 0: a writer of version 1.%u records them (never 0)", v->minor);
    }
    if (!used[i]) xp_problem(c, where, at, "no entry uses this family (a writer records only families in use)");
  }
}

void xp_check_small_tables(xp_checker* c) {
  const xp_view* v = c->v;
  const char* s;
  uint32_t len;
  char where[96];
  for (uint64_t i = 0; i < v->provenance.count && !c->stopped; i++) {
    const uint64_t at = v->provenance.offset + i * v->provenance.record_size;
    const uint8_t* p = v->base + at;
    snprintf(where, sizeof where, "provenance record %llu at offset %%llu", (unsigned long long)i);
    const uint32_t kind = xp_le32(p + XPC_P_KIND);
    if (!string_ok(v, xp_le32(p + XPC_P_NAME), &s, &len)) {
      xp_problem(c, where, at, "name offset %u is not a string of STRS: %s", xp_le32(p + XPC_P_NAME),
                 string_fault(v, xp_le32(p + XPC_P_NAME)));
    } else if (len == 0) {
      xp_problem(c, where, at, "name is empty: it is the input's file name");
    } else if (memchr(s, '/', len) != NULL) {
      xp_problem(c, where, at, "name \"%.*s\" holds a '/': it is the input's file name, without its folder",
                 (int)(len < 200 ? len : 200), s);
    }
    if (kind < XPC_INPUT_PTE || kind > XPC_INPUT_OTHER) {
      xp_problem(c, where, at, "kind %u unknown (1 .pte, 2 .ptd, 3 other)", kind);
    }
    const uint64_t file_size = xp_le64(p + XPC_P_FILE_SIZE), program_size = xp_le64(p + XPC_P_PROGRAM_SIZE);
    if (program_size > file_size) {
      xp_problem(c, where, at, "program_size %llu is more than the file's size %llu", (unsigned long long)program_size,
                 (unsigned long long)file_size);
    }
    if (kind != XPC_INPUT_PTE && (program_size != 0 || xp_le64(p + XPC_P_PROGRAM_HASH) != 0)) {
      xp_problem(c, where, at, "program_size and program hash must be 0 for an input that is no .pte (kind %u)", kind);
    }
  }
  for (uint64_t i = 0; i < v->info.count && !c->stopped; i++) {
    const uint64_t at = v->info.offset + i * v->info.record_size;
    const uint8_t* p = v->base + at;
    snprintf(where, sizeof where, "info record %llu at offset %%llu", (unsigned long long)i);
    const uint32_t key = xp_le32(p + XPC_I_KEY), value = xp_le32(p + XPC_I_VALUE);
    if (!string_ok(v, key, &s, &len)) {
      xp_problem(c, where, at, "key offset %u is not a string of STRS: %s", key, string_fault(v, key));
    }
    if (!string_ok(v, value, &s, &len)) {
      xp_problem(c, where, at, "value offset %u is not a string of STRS: %s", value, string_fault(v, value));
    }
  }
  check_families(c);
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
