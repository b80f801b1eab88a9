/* xpc_tamper: changes one thing in a cache file on purpose and re-seals every checksum that covers it
 * (the table's hash in the directory, the directory and metadata checksums, the footer checksum, and
    * entry check values where entries change), so that the file is sound and only the change differs. What a
    * loader then does is its reaction to that change alone, not to damage.
 *
 *   xpc_tamper FILE probe INDEX      FAMI record INDEX: probe value XOR 1
 *   xpc_tamper FILE name INDEX       FAMI record INDEX: the last byte of its name changed (an unknown family)
 *   xpc_tamper FILE build-id         BLDI: first byte XOR 1 (another XNNPACK build)
 *   xpc_tamper FILE no-family        every entry's family set to 0xFFFFFFFF (as a format 1.0 writer did)
 *   xpc_tamper FILE as-1.0           minor version 0 with the families kept (which a 1.0 file never has)
 * Rules of FORMAT.md that no checksum covers (issue 16), one at a time:
 *   xpc_tamper FILE dup-key          entry 1 takes entry 0's key, and entry 0 entry 1's region
 *   xpc_tamper FILE entry-flags      entry 0's flags get the unknown bit 2
 *   xpc_tamper FILE family-flags     FAMI record 0's flags set to 1
 *   xpc_tamper FILE family-order     FAMI records 0 and 1 swapped (entries follow): names not ascending
 *   xpc_tamper FILE family-dup       FAMI record 1 names record 0's family
 *   xpc_tamper FILE reserved         the header's reserved u16 set to 1
 *   xpc_tamper FILE arch N           the header's arch set to N (an ELF machine number)
 *   xpc_tamper FILE metadata-offset N  the footer's metadata_offset set to N (only the footer's checksum resealed)
 *   xpc_tamper FILE dir-count N      the footer's table directory count set to N (likewise)
 *   xpc_tamper FILE page-alignment   page_alignment doubled (data_offset left alone)
 *   xpc_tamper FILE huge-alignment   page_alignment and xnn_alignment 2^31 (what a transport file may claim)
 *   xpc_tamper FILE move-region I    region I (with a gap of 64 bytes before it) moved 64 bytes down
 *   xpc_tamper FILE prov-name-slash  provenance record 0's name starts with '/' (names hold no folder: 5.5)
 *   xpc_tamper FILE prov-name-empty  provenance record 0's name made the empty string (its length 0, in place)
 *   xpc_tamper FILE string-zero      entry 0's kernel identity gets a zero byte in its middle (FORMAT.md 5.4)
 *   xpc_tamper FILE ambiguous        the first kernel identity long enough made "xpack:ambiguous" in place (FORMAT.md 6),
 *                                    which no writer records (its key hash then no longer matches either)
 *   xpc_tamper FILE ambiguous-hashed the same, with every key hash recomputed and ENTR sorted again: an entry a
 *                                    look-up finds by its key, which no loader can bind
 *   xpc_tamper FILE info-newline     INFO record 0's key starts with a line break (a name that would forge a line)
 *   xpc_tamper FILE table-order      BLDI and INFO swapped, in the directory and in place (laid out again)
 *   xpc_tamper FILE info-shared N    N INFO records before the file's own, all naming entry 0's kernel identity
 *                                    as key and value (laid out again): strings shared past what a writer makes
 *   xpc_tamper FILE extra-tag TAG    the same, the table named TAG (4 bytes) and its directory hash wrong: a
 *                                    file's tag in a problem's text (a tag "%s%s" once crashed verify)
 *   xpc_tamper FILE alias-table N    N more directory entries, tagged ZZZZ, each naming the ENTR table (laid out
 *                                    again): a directory that would have a checker hash one table N + 1 times
 *   xpc_tamper FILE extra-table-empty  the same table with record_size 0 and no record: no table at all
 *   xpc_tamper FILE extra-table      a table XTRA of 8 bytes after the others (laid out again): a later minor's
 *   xpc_tamper FILE metadata-tail    8 bytes inserted between the table directory and the footer (metadata_size
 *                                    and file_size grown to hold them): bytes in no part of the file
 *   xpc_tamper FILE region-size I    region I's size one byte less (hash recomputed): not a multiple of the
 *                                    XNNPACK alignment
 *   xpc_tamper FILE region-at-end I  region I made the last XNNPACK-alignment bytes of the data area (offset
 *                                    and size changed, hash recomputed): a region whose size lies, placed where
 *                                    a read of the weight's real size runs past the end of the file
 *   xpc_tamper FILE region-declares N  the last region's size set to N, its bytes (a transport file's frame) and
 *                                    hash unchanged: a frame declaring more than the file could expand to
 *   xpc_tamper FILE region-bytes I   region I's middle byte XOR 1, its hash recomputed: a sound file whose
 *                                    packed bytes are not what XNNPACK produces
 *
 * The file is rewritten in place (a test tool: no atomic replace). Exit 0, or 1 with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cachefile/cache_view.h"
#include "common/le.h"
#include "xpc_format.h"

static uint8_t* g_file;
static size_t g_size;

static int die(const char* what) {
  fprintf(stderr, "xpc_tamper: %s\n", what);
  return 1;
}

/* The directory entry of `tag`, or NULL. */
static uint8_t* dir_entry(uint32_t tag) {
  const uint8_t* f = g_file + g_size - XPC_FOOTER_SIZE;
  uint64_t dir = xp_le64(f + XPC_F_DIR_OFFSET);
  uint32_t count = xp_le32(f + XPC_F_DIR_COUNT);
  for (uint32_t i = 0; i < count; i++) {
    uint8_t* d = g_file + dir + (uint64_t)i * XPC_DIR_ENTRY_SIZE;
    if (xp_le32(d + XPC_D_TAG) == tag) return d;
  }
  return NULL;
}

static uint8_t* table(uint32_t tag, uint64_t* count, uint32_t* record_size) {
  uint8_t* d = dir_entry(tag);
  if (d == NULL) return NULL;
  *count = xp_le64(d + XPC_D_COUNT);
  *record_size = xp_le32(d + XPC_D_RECORD_SIZE);
  return g_file + xp_le64(d + XPC_D_OFFSET);
}

/* Recomputes the table's hash, then the directory, metadata and footer checksums. */
static void reseal(uint32_t tag) {
  uint8_t* d = dir_entry(tag);
  uint64_t count;
  uint32_t record_size;
  uint8_t* t = table(tag, &count, &record_size);
  xp_put64(d + XPC_D_HASH, XXH3_64bits(t, (size_t)(count * record_size)));
  uint8_t* f = g_file + g_size - XPC_FOOTER_SIZE;
  uint64_t dir = xp_le64(f + XPC_F_DIR_OFFSET);
  xp_put64(f + XPC_F_DIR_HASH, XXH3_64bits(g_file + dir, (size_t)xp_le32(f + XPC_F_DIR_COUNT) * XPC_DIR_ENTRY_SIZE));
  uint64_t meta = xp_le64(f + XPC_F_METADATA_OFFSET);
  xp_put64(f + XPC_F_METADATA_HASH, XXH3_64bits(g_file + meta, (size_t)xp_le64(f + XPC_F_METADATA_SIZE)));
  xp_put64(f + XPC_F_CHECKSUM, XXH3_64bits(f, XPC_F_CHECKSUM));
}

/* Every entry's check value over its record and region record, then ENTR's hash. */
static int reseal_entries(void) {
  uint64_t entries, regions;
  uint32_t es, rs;
  uint8_t* e = table(XPC_TAG_ENTRIES, &entries, &es);
  uint8_t* r = table(XPC_TAG_REGIONS, &regions, &rs);
  if (e == NULL || r == NULL) return die("no ENTR or REGN table");
  for (uint64_t i = 0; i < entries; i++) {
    uint8_t* rec = e + i * es;
    uint32_t region = xp_le32(rec + XPC_E_REGION);
    if (region >= regions) return die("entry with a bad region index");
    xp_put64(rec + XPC_E_CHECK, xp_entry_check_of(rec, r + (uint64_t)region * rs));
  }
  reseal(XPC_TAG_ENTRIES);
  return 0;
}

/* ENTR in FORMAT.md 5.3's order (key hash, seed, kernel identity, bias identity, no bias first), for a change
 * that gave entries other key hashes. Strings are read from g_order_strings. */
static const uint8_t* g_order_strings;
static int compare_identities(uint32_t a, uint32_t b) {
  if (a == b) return 0;
  if (a == XPC_NONE || b == XPC_NONE) return a == XPC_NONE ? -1 : 1;
  const uint32_t la = xp_le32(g_order_strings + a), lb = xp_le32(g_order_strings + b);
  const int c = memcmp(g_order_strings + a + 4, g_order_strings + b + 4, la < lb ? la : lb);
  return c != 0 ? c : (la > lb) - (la < lb);
}
static int compare_entries(const void* x, const void* y) {
  const uint8_t *a = x, *b = y;
  const uint64_t ha = xp_le64(a + XPC_E_KEY_HASH), hb = xp_le64(b + XPC_E_KEY_HASH);
  if (ha != hb) return ha < hb ? -1 : 1;
  const uint32_t sa = xp_le32(a + XPC_E_SEED), sb = xp_le32(b + XPC_E_SEED);
  if (sa != sb) return sa < sb ? -1 : 1;
  const int k = compare_identities(xp_le32(a + XPC_E_KERNEL), xp_le32(b + XPC_E_KERNEL));
  return k != 0 ? k : compare_identities(xp_le32(a + XPC_E_BIAS), xp_le32(b + XPC_E_BIAS));
}

/* Every entry's key hash recomputed from its strings, ENTR sorted again and resealed. */
static int rehash_entries(void) {
  uint64_t entries, count;
  uint32_t es, record_size;
  uint8_t* e = table(XPC_TAG_ENTRIES, &entries, &es);
  const uint8_t* strings = table(XPC_TAG_STRINGS, &count, &record_size);
  if (e == NULL || strings == NULL || es != XPC_ENTRY_SIZE) return die("no ENTR or STRS table of this version");
  for (uint64_t i = 0; i < entries; i++) {
    uint8_t* rec = e + i * es;
    const uint32_t kernel = xp_le32(rec + XPC_E_KERNEL), bias = xp_le32(rec + XPC_E_BIAS);
    xp_put64(rec + XPC_E_KEY_HASH,
             xp_key_hash(xp_le32(rec + XPC_E_SEED), (const char*)strings + kernel + 4, xp_le32(strings + kernel),
                         bias == XPC_NONE ? NULL : (const char*)strings + bias + 4,
                         bias == XPC_NONE ? 0 : xp_le32(strings + bias)));
  }
  g_order_strings = strings;
  qsort(e, (size_t)entries, es, compare_entries);
  return reseal_entries();
}

static void reseal_header(void) { xp_put64(g_file + XPC_H_CHECKSUM, XXH3_64bits(g_file, XPC_H_CHECKSUM)); }

/* A table's record, or NULL when the table has no record `index`. */
static uint8_t* record(uint32_t tag, uint64_t index) {
  uint64_t count;
  uint32_t record_size;
  uint8_t* t = table(tag, &count, &record_size);
  return t != NULL && index < count ? t + index * record_size : NULL;
}

static int usage(void) {
  return die("usage: xpc_tamper FILE probe INDEX | probe-keys INDEX | as-1.2 | as-1.0 | no-probe-keys | name INDEX | build-id | "
             "arch N | metadata-offset N | dir-count N | "
             "no-family | dup-key | key-hash | unused-region | prov-program-size | prov-kind | entry-flags | family-flags | "
             "family-order | family-dup | reserved | arch-none | strs-record-size | page-alignment | huge-alignment | metadata-tail | table-order | "
             "extra-table | extra-tag TAG | alias-table N | info-shared N | string-zero | ambiguous | info-newline | "
             "prov-name-slash | prov-name-empty | extra-table-empty | ambiguous-hashed | "
             "move-region INDEX | "
             "region-size INDEX | region-at-end INDEX | region-bytes INDEX | region-declares N");
}

/* The rules no checksum covers; -1 for a name this function does not know. */
/* 8 bytes of 0xAB before the footer, inside a grown metadata area. */
static int grow_metadata_tail(void) {
  enum { TAIL = 8 };
  if (g_size < XPC_FOOTER_SIZE) return die("shorter than a footer");
  uint8_t* grown = realloc(g_file, g_size + TAIL);
  if (grown == NULL) return die("out of memory");
  g_file = grown;
  uint8_t* f = g_file + g_size - XPC_FOOTER_SIZE;
  for (size_t i = XPC_FOOTER_SIZE; i-- > 0;) f[TAIL + i] = f[i]; /* the footer moves up (GCC's bounds check
                                                                   * took memmove for a copy into nothing) */
  memset(f, 0xAB, TAIL);
  g_size += TAIL;
  f += TAIL;
  xp_put64(f + XPC_F_METADATA_SIZE, xp_le64(f + XPC_F_METADATA_SIZE) + TAIL);
  xp_put64(f + XPC_F_FILE_SIZE, g_size);
  const uint64_t meta = xp_le64(f + XPC_F_METADATA_OFFSET);
  xp_put64(f + XPC_F_METADATA_HASH, XXH3_64bits(g_file + meta, (size_t)xp_le64(f + XPC_F_METADATA_SIZE)));
  xp_put64(f + XPC_F_CHECKSUM, XXH3_64bits(f, XPC_F_CHECKSUM));
  return 0;
}

/* A table's new contents for lay_out_tables: `count` records of the table's record size. */
typedef struct replaced_table {
  uint32_t tag; /* 0: none */
  const uint8_t* bytes;
  uint64_t count;
} replaced_table;

/* The metadata area written again from its tables in directory order, with the directory entries i and j
 * swapped first (i == j: none), the table `replace->tag` holding replace->bytes (its hash recomputed) and, with
 * `extra`, an 8-byte table XTRA appended; the data area stays. */
static uint32_t g_extra_tag = XPC_TAG('X', 'T', 'R', 'A');
static uint64_t g_extra_hash_delta; /* 1: the extra table's directory hash is wrong */
static int g_extra_empty;           /* 1: the extra table has record_size 0 and no record */
static uint32_t g_aliases;          /* directory entries appended that name the ENTR table */

static int lay_out_tables_replacing(uint32_t i, uint32_t j, int extra, const replaced_table* replace) {
  const uint8_t* f = g_file + g_size - XPC_FOOTER_SIZE;
  const uint64_t meta = xp_le64(f + XPC_F_METADATA_OFFSET), dir = xp_le64(f + XPC_F_DIR_OFFSET);
  const uint32_t count = xp_le32(f + XPC_F_DIR_COUNT);
  if (i >= count || j >= count || count > 32) return die("no such table");
  uint8_t entries[33][XPC_DIR_ENTRY_SIZE];
  memcpy(entries, g_file + dir, (size_t)count * XPC_DIR_ENTRY_SIZE);
  uint8_t swap[XPC_DIR_ENTRY_SIZE];
  memcpy(swap, entries[i], sizeof swap);
  memcpy(entries[i], entries[j], sizeof swap);
  memcpy(entries[j], swap, sizeof swap);
  static const uint8_t kExtra[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const uint32_t tables = count + (extra ? 1 : 0);
  for (uint32_t k = 0; k < count && replace->tag != 0; k++) {
    if (xp_le32(entries[k] + XPC_D_TAG) != replace->tag) continue;
    xp_put64(entries[k] + XPC_D_COUNT, replace->count);
    xp_put64(entries[k] + XPC_D_HASH,
             XXH3_64bits(replace->bytes, (size_t)(replace->count * xp_le32(entries[k] + XPC_D_RECORD_SIZE))));
  }
  if (extra) {
    memset(entries[count], 0, XPC_DIR_ENTRY_SIZE);
    xp_put32(entries[count] + XPC_D_TAG, g_extra_tag);
    xp_put32(entries[count] + XPC_D_RECORD_SIZE, g_extra_empty ? 0 : 1);
    xp_put64(entries[count] + XPC_D_COUNT, g_extra_empty ? 0 : sizeof kExtra);
    xp_put64(entries[count] + XPC_D_HASH, XXH3_64bits(kExtra, g_extra_empty ? 0 : sizeof kExtra) + g_extra_hash_delta);
  }
  uint64_t size = meta;
  for (uint32_t k = 0; k < tables; k++) {
    size = (size + 7) / 8 * 8 + xp_le64(entries[k] + XPC_D_COUNT) * xp_le32(entries[k] + XPC_D_RECORD_SIZE);
  }
  const uint32_t listed = tables + g_aliases;
  const uint64_t new_dir = (size + 7) / 8 * 8, new_size = new_dir + (uint64_t)listed * XPC_DIR_ENTRY_SIZE + XPC_FOOTER_SIZE;
  uint8_t* out = calloc(1, (size_t)new_size);
  if (out == NULL) return die("out of memory");
  memcpy(out, g_file, (size_t)meta);
  uint64_t at = meta;
  for (uint32_t k = 0; k < tables; k++) {
    at = (at + 7) / 8 * 8;
    const uint64_t bytes = xp_le64(entries[k] + XPC_D_COUNT) * xp_le32(entries[k] + XPC_D_RECORD_SIZE);
    const uint8_t* from = extra && k == count                          ? kExtra
                          : xp_le32(entries[k] + XPC_D_TAG) == replace->tag ? replace->bytes
                                                                           : g_file + xp_le64(entries[k] + XPC_D_OFFSET);
    memcpy(out + at, from, (size_t)bytes);
    xp_put64(entries[k] + XPC_D_OFFSET, at);
    at += bytes;
  }
  memcpy(out + new_dir, entries, (size_t)tables * XPC_DIR_ENTRY_SIZE);
  for (uint32_t a = 0; a < g_aliases; a++) {
    uint8_t* alias = out + new_dir + (uint64_t)(tables + a) * XPC_DIR_ENTRY_SIZE;
    for (uint32_t k = 0; k < tables; k++) {
      if (xp_le32(entries[k] + XPC_D_TAG) == XPC_TAG_ENTRIES) memcpy(alias, entries[k], XPC_DIR_ENTRY_SIZE);
    }
    xp_put32(alias + XPC_D_TAG, XPC_TAG('Z', 'Z', 'Z', 'Z'));
  }
  uint8_t* nf = out + new_size - XPC_FOOTER_SIZE;
  memcpy(nf, f, XPC_FOOTER_SIZE);
  xp_put64(nf + XPC_F_METADATA_SIZE, new_size - XPC_FOOTER_SIZE - meta);
  xp_put64(nf + XPC_F_DIR_OFFSET, new_dir);
  xp_put32(nf + XPC_F_DIR_COUNT, listed);
  xp_put64(nf + XPC_F_FILE_SIZE, new_size);
  xp_put64(nf + XPC_F_DIR_HASH, XXH3_64bits(out + new_dir, (size_t)listed * XPC_DIR_ENTRY_SIZE));
  xp_put64(nf + XPC_F_METADATA_HASH, XXH3_64bits(out + meta, (size_t)(new_size - XPC_FOOTER_SIZE - meta)));
  xp_put64(nf + XPC_F_CHECKSUM, XXH3_64bits(nf, XPC_F_CHECKSUM));
  free(g_file);
  g_file = out;
  g_size = (size_t)new_size;
  return 0;
}

static int lay_out_tables(uint32_t i, uint32_t j, int extra) {
  const replaced_table none = {0, NULL, 0};
  return lay_out_tables_replacing(i, j, extra, &none);
}

/* n INFO records before the file's own, each naming entry 0's kernel identity as key and value: a sound file
 * whose records share one string far more than a writer makes them. */
static int info_shared(uint64_t n) {
  uint64_t count;
  uint32_t record_size;
  const uint8_t* info = table(XPC_TAG_INFO, &count, &record_size);
  const uint8_t* e0 = record(XPC_TAG_ENTRIES, 0);
  if (info == NULL || e0 == NULL || record_size < 8) return die("no INFO table or no entry");
  uint8_t* grown = calloc((size_t)(n + count), record_size);
  if (grown == NULL) return die("out of memory");
  for (uint64_t i = 0; i < n; i++) {
    xp_put32(grown + i * record_size + XPC_I_KEY, xp_le32(e0 + XPC_E_KERNEL));
    xp_put32(grown + i * record_size + XPC_I_VALUE, xp_le32(e0 + XPC_E_KERNEL));
  }
  memcpy(grown + n * record_size, info, (size_t)(count * record_size));
  const replaced_table replace = {XPC_TAG_INFO, grown, n + count};
  const int st = lay_out_tables_replacing(0, 0, 0, &replace);
  free(grown);
  return st;
}

/* The directory index of tag, or UINT32_MAX. */
static uint32_t dir_index(uint32_t tag) {
  const uint8_t* d = dir_entry(tag);
  if (d == NULL) return UINT32_MAX;
  const uint8_t* f = g_file + g_size - XPC_FOOTER_SIZE;
  return (uint32_t)((uint64_t)(d - g_file - xp_le64(f + XPC_F_DIR_OFFSET)) / XPC_DIR_ENTRY_SIZE);
}

static int break_rule(const char* what, const char* arg) {
  uint8_t *e0 = record(XPC_TAG_ENTRIES, 0), *e1 = record(XPC_TAG_ENTRIES, 1);
  if (strcmp(what, "metadata-tail") == 0) return grow_metadata_tail();
  if (strcmp(what, "table-order") == 0) return lay_out_tables(dir_index(XPC_TAG_BUILD_ID), dir_index(XPC_TAG_INFO), 0);
  if (strcmp(what, "extra-table") == 0) return lay_out_tables(0, 0, 1);
  if (strcmp(what, "extra-table-empty") == 0) {
    g_extra_empty = 1;
    return lay_out_tables(0, 0, 1);
  }
  if (strcmp(what, "alias-table") == 0) {
    if (arg == NULL) return usage();
    g_aliases = (uint32_t)strtoul(arg, NULL, 10);
    return lay_out_tables(0, 0, 0);
  }
  if (strcmp(what, "extra-tag") == 0) {
    if (arg == NULL || strlen(arg) != 4) return usage();
    g_extra_tag = XPC_TAG(arg[0], arg[1], arg[2], arg[3]);
    g_extra_hash_delta = 1;
    return lay_out_tables(0, 0, 1);
  }
  if (strcmp(what, "info-shared") == 0) return arg ? info_shared(strtoull(arg, NULL, 10)) : usage();
  uint8_t *m0 = record(XPC_TAG_FAMILIES, 0), *m1 = record(XPC_TAG_FAMILIES, 1);
  if (strcmp(what, "dup-key") == 0) {
    if (e1 == NULL) return die("needs two entries");
    const uint32_t region0 = xp_le32(e0 + XPC_E_REGION);
    memcpy(e1, e0, XPC_E_REGION); /* key_hash, seed, kernel, bias */
    xp_put32(e0 + XPC_E_REGION, xp_le32(e1 + XPC_E_REGION));
    xp_put32(e1 + XPC_E_REGION, region0);
    return reseal_entries();
  }
  if (strcmp(what, "unused-region") == 0) { /* entry 0 names entry 1's region: its own is named by none */
    if (e1 == NULL || xp_le32(e0 + XPC_E_REGION) == xp_le32(e1 + XPC_E_REGION)) return die("needs two regions");
    xp_put32(e0 + XPC_E_REGION, xp_le32(e1 + XPC_E_REGION));
    return reseal_entries();
  }
  if (strcmp(what, "prov-program-size") == 0 || strcmp(what, "prov-kind") == 0) {
    uint8_t* p0 = record(XPC_TAG_PROVENANCE, 0);
    if (p0 == NULL) return die("needs a provenance record");
    if (what[5] == 'p') xp_put64(p0 + XPC_P_PROGRAM_SIZE, xp_le64(p0 + XPC_P_FILE_SIZE) + 1);
    else if (xp_le32(p0 + XPC_P_KIND) == XPC_INPUT_PTE) xp_put32(p0 + XPC_P_KIND, XPC_INPUT_OTHER); /* its program kept */
    else xp_put64(p0 + XPC_P_PROGRAM_HASH, 1); /* a program's hash for no program */
    reseal(XPC_TAG_PROVENANCE);
    return 0;
  }
  if (strcmp(what, "prov-name-slash") == 0 || strcmp(what, "prov-name-empty") == 0) {
    /* provenance record 0's name, in place: a '/' for its first byte, or made the empty string */
    uint64_t count;
    uint32_t record_size;
    uint8_t* strings = table(XPC_TAG_STRINGS, &count, &record_size);
    uint8_t* p0 = record(XPC_TAG_PROVENANCE, 0);
    if (p0 == NULL || strings == NULL) return die("needs a provenance record and STRS");
    const uint32_t at = xp_le32(p0 + XPC_P_NAME);
    if ((uint64_t)at + 4 > count || xp_le32(strings + at) < 2) return die("the input's name is no string of 2 bytes");
    if (what[10] == 's') {
      strings[at + 4] = '/';
    } else {
      xp_put32(strings + at, 0);
      strings[at + 4] = 0;
    }
    reseal(XPC_TAG_STRINGS);
    return 0;
  }
  if (strcmp(what, "info-newline") == 0) { /* INFO record 0's key starts with a line break */
    uint64_t count;
    uint32_t record_size;
    uint8_t* strings = table(XPC_TAG_STRINGS, &count, &record_size);
    const uint8_t* i0 = record(XPC_TAG_INFO, 0);
    if (i0 == NULL || strings == NULL) return die("needs an INFO record and STRS");
    const uint32_t at = xp_le32(i0 + XPC_I_KEY);
    if ((uint64_t)at + 4 > count || xp_le32(strings + at) < 1) return die("INFO record 0's key is no string");
    strings[at + 4] = '\n';
    reseal(XPC_TAG_STRINGS);
    return 0;
  }
  if (strcmp(what, "string-zero") == 0) { /* a zero byte in the middle of entry 0's kernel identity */
    uint64_t count;
    uint32_t record_size;
    uint8_t* strings = table(XPC_TAG_STRINGS, &count, &record_size);
    if (e0 == NULL || strings == NULL) return die("needs an entry and STRS");
    const uint32_t at = xp_le32(e0 + XPC_E_KERNEL);
    if ((uint64_t)at + 4 > count || xp_le32(strings + at) < 2) return die("entry 0's kernel is no string of 2 bytes");
    strings[at + 4 + xp_le32(strings + at) / 2] = 0;
    reseal(XPC_TAG_STRINGS);
    return 0;
  }
  if (strcmp(what, "ambiguous") == 0 || strcmp(what, "ambiguous-hashed") == 0) {
    /* the identity of a weight packed in more than one way, as a key; hashed: with its key hash and order right */
    uint64_t count, entries;
    uint32_t record_size, entry_size;
    uint8_t* strings = table(XPC_TAG_STRINGS, &count, &record_size);
    uint8_t* first = table(XPC_TAG_ENTRIES, &entries, &entry_size);
    const uint32_t n = sizeof XPC_IDENTITY_AMBIGUOUS - 1;
    for (uint64_t i = 0; strings != NULL && first != NULL && i < entries; i++) {
      const uint32_t at = xp_le32(first + i * entry_size + XPC_E_KERNEL);
      if ((uint64_t)at + 4 > count || xp_le32(strings + at) < n) continue;
      xp_put32(strings + at, n);
      memcpy(strings + at + 4, XPC_IDENTITY_AMBIGUOUS, n + 1);
      reseal(XPC_TAG_STRINGS);
      return strcmp(what, "ambiguous-hashed") == 0 ? rehash_entries() : 0;
    }
    return die("no entry's kernel identity is as long as the name");
  }
  if (strcmp(what, "key-hash") == 0) { /* entry 0 keeps its key, but its hash no longer matches it */
    if (e0 == NULL) return die("needs an entry");
    xp_put64(e0 + XPC_E_KEY_HASH, xp_le64(e0 + XPC_E_KEY_HASH) ^ 1);
    return reseal_entries();
  }
  if (strcmp(what, "entry-flags") == 0) {
    if (e0 == NULL) return die("needs an entry");
    xp_put32(e0 + XPC_E_FLAGS, xp_le32(e0 + XPC_E_FLAGS) | 4);
    return reseal_entries();
  }
  if (strcmp(what, "family-flags") == 0) {
    if (m0 == NULL) return die("needs a family");
    xp_put32(m0 + XPC_M_FLAGS, 1);
    reseal(XPC_TAG_FAMILIES);
    return 0;
  }
  if (strcmp(what, "family-order") == 0 || strcmp(what, "family-dup") == 0) {
    if (m1 == NULL) return die("needs two families");
    if (what[7] == 'd') {
      xp_put32(m1 + XPC_M_NAME, xp_le32(m0 + XPC_M_NAME));
    } else {
      uint8_t swap[XPC_FAMILY_SIZE];
      memcpy(swap, m0, sizeof swap);
      memcpy(m0, m1, sizeof swap);
      memcpy(m1, swap, sizeof swap);
      for (uint64_t i = 0; record(XPC_TAG_ENTRIES, i) != NULL; i++) {
        uint8_t* e = record(XPC_TAG_ENTRIES, i);
        const uint32_t family = xp_le32(e + XPC_E_FAMILY);
        if (family <= 1) xp_put32(e + XPC_E_FAMILY, 1 - family);
      }
      if (reseal_entries() != 0) return 1;
    }
    reseal(XPC_TAG_FAMILIES);
    return 0;
  }
  if (strcmp(what, "strs-record-size") == 0) { /* STRS as records of 2 bytes, half as many, in the same bytes */
    uint8_t* d = dir_entry(XPC_TAG_STRINGS);
    if (d == NULL) return die("no STRS table");
    xp_put32(d + XPC_D_RECORD_SIZE, 2);
    xp_put64(d + XPC_D_COUNT, xp_le64(d + XPC_D_COUNT) / 2);
    reseal(XPC_TAG_STRINGS);
    return 0;
  }
  if (strcmp(what, "arch") == 0 && arg != NULL) { /* another architecture's number, or none xpack knows */
    xp_put16(g_file + XPC_H_ARCH, (uint16_t)strtoul(arg, NULL, 0));
    reseal_header();
    return 0;
  }
  if ((strcmp(what, "metadata-offset") == 0 || strcmp(what, "dir-count") == 0) && arg != NULL) {
    uint8_t* f = g_file + g_size - XPC_FOOTER_SIZE;
    if (what[0] == 'm') xp_put64(f + XPC_F_METADATA_OFFSET, strtoull(arg, NULL, 0));
    else xp_put32(f + XPC_F_DIR_COUNT, (uint32_t)strtoul(arg, NULL, 0));
    xp_put64(f + XPC_F_CHECKSUM, XXH3_64bits(f, XPC_F_CHECKSUM));
    return 0;
  }
  if (strcmp(what, "arch-none") == 0) {
    xp_put16(g_file + XPC_H_ARCH, 0);
    reseal_header();
    return 0;
  }
  if (strcmp(what, "reserved") == 0) {
    xp_put16(g_file + XPC_H_RESERVED0, 1);
    reseal_header();
    return 0;
  }
  if (strcmp(what, "page-alignment") == 0 || strcmp(what, "huge-alignment") == 0) {
    const uint32_t page = xp_le32(g_file + XPC_H_PAGE_ALIGNMENT);
    xp_put32(g_file + XPC_H_PAGE_ALIGNMENT, what[0] == 'h' ? 0x80000000u : page * 2);
    if (what[0] == 'h') xp_put32(g_file + XPC_H_XNN_ALIGNMENT, 0x80000000u);
    reseal_header();
    return 0;
  }
  if (strcmp(what, "region-declares") == 0 && arg != NULL) { /* the last region's size, its frame unchanged */
    uint64_t count;
    uint32_t record_size;
    uint8_t* regions = table(XPC_TAG_REGIONS, &count, &record_size);
    if (regions == NULL || count == 0) return die("no region");
    xp_put64(regions + (count - 1) * record_size + XPC_R_SIZE, strtoull(arg, NULL, 0));
    reseal(XPC_TAG_REGIONS);
    return reseal_entries();
  }
  if ((strcmp(what, "move-region") == 0 || strncmp(what, "region-", 7) == 0) && arg != NULL) {
    uint8_t* r = record(XPC_TAG_REGIONS, strtoull(arg, NULL, 10));
    if (r == NULL) return die("no such region");
    const uint64_t offset = xp_le64(r + XPC_R_OFFSET), size = xp_le64(r + XPC_R_SIZE);
    if (what[0] == 'm') {
      if (offset < 64 || g_file[offset - 64] != 0) return die("no zero gap of 64 bytes before the region");
      memmove(g_file + offset - 64, g_file + offset, (size_t)size);
      memset(g_file + offset - 64 + size, 0, 64);
      xp_put64(r + XPC_R_OFFSET, offset - 64);
    } else if (strcmp(what, "region-bytes") == 0) {
      g_file[offset + size / 2] ^= 1;
      xp_put64(r + XPC_R_HASH, XXH3_64bits(g_file + offset, (size_t)size));
    } else if (strcmp(what, "region-at-end") == 0) {
      const uint64_t alignment = xp_le32(g_file + XPC_H_XNN_ALIGNMENT);
      const uint64_t end = xp_le64(g_file + XPC_H_DATA_OFFSET) + xp_le64(g_file + XPC_H_DATA_SIZE);
      if (alignment == 0 || end < alignment || size <= alignment) return die("region too small to shrink");
      xp_put64(r + XPC_R_OFFSET, end - alignment);
      xp_put64(r + XPC_R_SIZE, alignment);
      xp_put64(r + XPC_R_STORED_SIZE, alignment);
      xp_put64(r + XPC_R_HASH, XXH3_64bits(g_file + end - alignment, (size_t)alignment));
    } else if (strcmp(what, "region-size") == 0) {
      if (xp_le32(g_file + XPC_H_FLAGS) & XPC_FLAG_TRANSPORT) return die("region-size: a transport file's region "
                                                                      "holds a frame: use region-declares");
      g_file[offset + size - 1] = 0;
      xp_put64(r + XPC_R_SIZE, size - 1);
      xp_put64(r + XPC_R_STORED_SIZE, size - 1);
      xp_put64(r + XPC_R_HASH, XXH3_64bits(g_file + offset, (size_t)(size - 1)));
    }
    reseal(XPC_TAG_REGIONS);
    return reseal_entries();
  }
  return -1;
}

static int family_record(const char* index_text, uint8_t** record) {
  uint64_t count;
  uint32_t record_size;
  uint8_t* t = table(XPC_TAG_FAMILIES, &count, &record_size);
  char* end;
  unsigned long index = strtoul(index_text, &end, 10);
  if (t == NULL || *end != 0 || index >= count) return -1;
  *record = t + index * record_size;
  return 0;
}

static int tamper(const char* what, const char* arg) {
  if (strcmp(what, "probe") == 0 && arg) {
    uint8_t* m;
    if (family_record(arg, &m) != 0) return die("no such family record");
    xp_put64(m + XPC_M_PROBE_HASH, xp_le64(m + XPC_M_PROBE_HASH) ^ 1);
    reseal(XPC_TAG_FAMILIES);
    return 0;
  }
  if (strcmp(what, "probe-keys") == 0 && arg) {
    uint8_t* m;
    if (family_record(arg, &m) != 0) return die("no such family record");
    xp_put64(m + XPC_M_PROBE_KEYS, xp_le64(m + XPC_M_PROBE_KEYS) ^ 1);
    reseal(XPC_TAG_FAMILIES);
    return 0;
  }
  if (strcmp(what, "as-1.2") == 0 || strcmp(what, "no-probe-keys") == 0 || strcmp(what, "as-1.0") == 0) {
    /* as-1.2: what a writer of format 1.2 wrote, minor 2 and every family's probe-keys field 0 (reserved then);
     * no-probe-keys: the fields 0 in a file of this version, which a writer never leaves so; as-1.0: minor 0
     * with the families kept, which no 1.0 writer had (FORMAT.md 5.8). */
    const int as_old = strcmp(what, "no-probe-keys") != 0;
    const uint16_t minor = strcmp(what, "as-1.0") == 0 ? 0 : 2;
    uint64_t count;
    uint32_t record_size;
    uint8_t* t = table(XPC_TAG_FAMILIES, &count, &record_size);
    if (t == NULL) return die("no FAMI table");
    for (uint64_t i = 0; i < count; i++) xp_put64(t + i * record_size + XPC_M_PROBE_KEYS, 0);
    if (as_old) {
      xp_put16(g_file + XPC_H_MINOR, minor);
      xp_put16(g_file + g_size - XPC_FOOTER_SIZE + XPC_F_MINOR, minor);
    }
    reseal(XPC_TAG_FAMILIES);
    reseal_header();
    return 0;
  }
  if (strcmp(what, "name") == 0 && arg) {
    uint8_t* m;
    uint64_t n;
    uint32_t rs;
    uint8_t* strings = table(XPC_TAG_STRINGS, &n, &rs);
    if (family_record(arg, &m) != 0 || strings == NULL) return die("no such family record");
    uint32_t offset = xp_le32(m + XPC_M_NAME);
    uint32_t len = offset + 4 <= n ? xp_le32(strings + offset) : 0;
    if (len == 0 || (uint64_t)offset + 4 + len > n) return die("family name out of bounds");
    strings[offset + 4 + len - 1] = '9'; /* "transpose=9", "out=f39", ...: no family spells so */
    reseal(XPC_TAG_STRINGS);
    return 0;
  }
  if (strcmp(what, "build-id") == 0) {
    uint64_t n;
    uint32_t rs;
    uint8_t* b = table(XPC_TAG_BUILD_ID, &n, &rs);
    if (b == NULL || n == 0) return die("no build identifier");
    b[0] ^= 1;
    reseal(XPC_TAG_BUILD_ID);
    return 0;
  }
  if (strcmp(what, "no-family") == 0) {
    uint64_t entries_done = 0;
    for (uint8_t* e; (e = record(XPC_TAG_ENTRIES, entries_done)) != NULL; entries_done++) {
      xp_put32(e + XPC_E_FAMILY, XPC_NONE);
    }
    return reseal_entries();
  }
  const int rule = break_rule(what, arg);
  if (rule >= 0) return rule;
  return usage();
}

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  FILE* f = fopen(argv[1], "rb");
  if (f == NULL) return die("cannot open the file");
  fseek(f, 0, SEEK_END);
  g_size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  g_file = malloc(g_size ? g_size : 1);
  if (g_file == NULL || fread(g_file, 1, g_size, f) != g_size || g_size < XPC_HEADER_SIZE + XPC_FOOTER_SIZE ||
      memcmp(g_file + g_size - XPC_FOOTER_MAGIC_SIZE, XPC_FOOTER_MAGIC, XPC_FOOTER_MAGIC_SIZE) != 0) {
    fclose(f);
    return die("not an xpack cache");
  }
  fclose(f);
  int rc = tamper(argv[2], argc > 3 ? argv[3] : NULL);
  if (rc == 0) {
    f = fopen(argv[1], "wb");
    if (f == NULL || fwrite(g_file, 1, g_size, f) != g_size || fclose(f) != 0) return die("cannot write the file");
  }
  free(g_file);
  return rc;
}
