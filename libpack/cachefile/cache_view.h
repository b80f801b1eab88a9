/* A validated, read-only view of a cache file held in memory (a mapping or a buffer).
 *
 * libpack/cachefile/ is the one module that knows the cache file format (docs/FORMAT.md, with its
 * numbers in format/xpc_format.h); a format change touches only these files and those two. Each file
 * owns these sections of FORMAT.md:
 *   cache_view.c    reading: layout (2), header (3), tables and directory (5), key hash (5.9), footer (7),
 *                   what open and a look-up check (8)
 *   cache_open.c    a file from a path: mapped, then its view opened
 *   cache_checks.c  every check beyond open: what `xpack verify` checks (8), the transport layout (9.1)
 *   cache_write.c   writing: header (3), every table's records, the directory and the entry check values
 *                   (5), footer (7), and the metadata of a file whose regions moved (9.3)
 *   region_place.h  where the mappable form puts regions (4, 9.3 step 2)
 * Frames (9.2) belong to transport/, families and probes (5.8) to loader/, and writing a file safely (11)
 * to common/safe_write.h.
 *
 * xp_view_open checks everything that is O(1) or proportional to the small tables: footer, header,
 * directory, bounds of every table, and the checksums of all tables except REGN, ENTR and STRS. Those
 * three can be large; they are checked piece by piece when used (every entry found by a look-up has its
 * own check value covering it and its region record, and every string offset is bounds-checked), and
 * in full by verify. So opening costs the same at 10 or 100,000 entries and allocates nothing. */
#ifndef XPACK_SRC_CACHE_VIEW_H
#define XPACK_SRC_CACHE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xpack_status.h"

typedef struct xp_table {
  int present;
  uint32_t tag;
  uint32_t record_size;
  uint64_t offset;
  uint64_t count;
  uint64_t hash;
} xp_table;

typedef struct xp_region {
  uint64_t offset;
  uint64_t stored_size;
  uint64_t size;
  uint64_t hash;
} xp_region;

typedef struct xp_entry {
  uint64_t key_hash;
  uint32_t seed;
  uint32_t kernel; /* STRS offset */
  uint32_t bias;   /* STRS offset or XPC_NONE */
  uint32_t region;
  uint32_t family;
  uint32_t flags;
  uint64_t check;
} xp_entry;

typedef struct xp_family {
  uint32_t name; /* STRS offset */
  uint32_t flags;
  uint64_t probe_hash;
  uint64_t probe_keys; /* 0: not recorded (files of 1.2 and older) */
} xp_family;

typedef struct xp_view {
  const uint8_t* base;
  uint64_t size;
  uint16_t major, minor;
  uint32_t flags;
  uint32_t page_alignment;
  uint32_t xnn_alignment;
  uint16_t arch;
  uint64_t data_offset, data_size;
  uint64_t metadata_offset, metadata_size, metadata_hash;
  uint64_t dir_offset;
  uint32_t dir_count;
  xp_table regions, entries, strings, provenance, build_id, info, families;
} xp_view;

/* Validates the structure of base[0, size). `name` is used in messages (a path). On failure the status
 * is NOT_XPACK, VERSION, TRUNCATED, CORRUPT or TRANSPORT (transport form is reported only when
 * allow_transport is 0; inspection tools pass 1). */
xpack_status xp_view_open(xp_view* view, const uint8_t* base, uint64_t size, const char* name, int allow_transport,
                          xpack_error* err);

/* A string of STRS at byte offset `offset`; returns 0 and sets *s and *len when it lies inside the table
 * and ends with its NUL and holds no other zero byte, else the fault (negative: XP_STRING_*). */
enum {
  XP_STRING_LENGTH_OUTSIDE = -1,
  XP_STRING_BYTES_OUTSIDE = -2,
  XP_STRING_UNTERMINATED = -3,
  XP_STRING_HOLDS_ZERO = -4,
};
int xp_view_string(const xp_view* view, uint32_t offset, const char** s, uint32_t* len);
/* xp_view_string without its scan for a zero byte inside the string: the checks that read no more than the length
 * and the terminator, O(1) however long the string, for callers that read only part of it or its length. Returns
 * 0 (with *s and *len) or XP_STRING_LENGTH_OUTSIDE, _BYTES_OUTSIDE or _UNTERMINATED. */
int xp_view_string_span(const xp_view* view, uint32_t offset, const char** s, uint32_t* len);
/* The fault xp_view_string returned, in words for a message. */
const char* xp_view_string_fault(int fault);

/* A table tag as four printable characters ('?' for any other byte) and a NUL, for messages. */
void xp_tag_text(uint32_t tag, char out[5]);
/* The tables of this version in the order a writer emits them (FORMAT.md 5.1): the tag and record size of
 * table k, for k below the count returned. */
size_t xp_known_tables(uint32_t tag[], uint32_t record_size[], size_t capacity);

/* Record accessors; the index must be below the table's count. */
void xp_view_region(const xp_view* view, uint64_t index, xp_region* out);
void xp_view_entry(const xp_view* view, uint64_t index, xp_entry* out);
void xp_view_family(const xp_view* view, uint64_t index, xp_family* out);

/* The sum of every region's size (what the regions hand XNNPACK, or decode to in the transport form), at most
 * UINT64_MAX. */
uint64_t xp_view_region_bytes(const xp_view* view);

/* A region record's bytes (REGN, docs/FORMAT.md 5.2): what the writer stores and what an entry's check
 * value covers. */
void xp_put_region(uint8_t* record, const xp_region* region);

/* The check value of an entry (FORMAT.md 5.3), the one formula for writing and reading it: XXH3-64 of the
 * entry record's first XPC_E_CHECK bytes followed by the first XPC_REGION_SIZE bytes of its region record. */
uint64_t xp_entry_check_of(const uint8_t* entry_record, const uint8_t* region_record);

/* The XXH3-64 a valid entry carries in its check field: xp_entry_check_of over entry `index` as stored and
 * `region` (its region record, decoded) encoded again. */
uint64_t xp_entry_check(const xp_view* view, uint64_t index, const xp_region* region);

/* Whether a region record lies inside the data area, is aligned as the format requires (large regions on
 * a page) and has a size that is a non-zero multiple of xnn_alignment. */
int xp_region_is_sound(const xp_view* view, const xp_region* region);

/* Whether the bytes of a region of the mappable form (inside the file: xp_region_is_sound) hash to its
 * record's XXH3-64. When they do not and why is not NULL, why gets "XXH3-64 of its N bytes is H, the record
 * says H". The one region checksum check of verify, compress and the loader's XPACK_OPEN_CHECK_REGIONS. */
int xp_region_bytes_match(const xp_view* view, const xp_region* region, char* why, size_t why_size);

/* The key hash of docs/FORMAT.md: XXH3-64 of seed, kernel identity and bias identity (NULL = none). */
uint64_t xp_key_hash(uint32_t seed, const char* kernel, size_t kernel_len, const char* bias, size_t bias_len);

typedef enum xp_find_result {
  XPC_FOUND = 0,
  XPC_NOT_FOUND = 1,
  XPC_ENTRY_CORRUPT = 2, /* an entry with this key exists but fails its check or bounds */
} xp_find_result;

/* Bytewise order of two strings (FORMAT.md 5.3, 5.8), a shorter prefix first; NULL (no string) before any. */
int xp_string_order(const char* a, size_t a_len, const char* b, size_t b_len);

/* Finds the entry for (seed, kernel, bias) with one binary search over ENTR's order (key_hash, then seed and
 * identities: FORMAT.md 5.3), O(log entries) however many entries share a key hash. On XPC_FOUND fills
 * *entry, *region (both checked) and *index (if not NULL). bias may be NULL (no bias). XPC_ENTRY_CORRUPT when the one matching entry fails its check, flags
 * or region, or when two entries claim the key (neighbours in that order: neither is served). */
xp_find_result xp_view_find(const xp_view* view, uint32_t seed, const char* kernel, size_t kernel_len,
                              const char* bias, size_t bias_len, xp_entry* entry, xp_region* region,
                              uint64_t* index);

/* Whether an identity of len bytes (NULL: none) is XPC_IDENTITY_AMBIGUOUS, which names no weight (FORMAT.md 6). */
bool xp_identity_is_ambiguous(const char* identity, size_t len);

/* Whether a look-up of entry `index`'s own key finds that entry sound (xp_view_find), i.e. whether the
 * entry is served when its family is; false for an index out of range, strings that are none, an identity of
 * XPC_IDENTITY_AMBIGUOUS (it names no weight), or an empty one or one longer than max_identity_len bytes (no
 * reader can bind it: the loader binds 1 to XPACK_IDENTITY_MAX_LEN bytes). */
bool xp_view_entry_findable(const xp_view* view, uint64_t index, size_t max_identity_len);

#endif
