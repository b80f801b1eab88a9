/* Writing a cache file's metadata area, footer and header (docs/FORMAT.md sections 3, 5, 7 and 11), and
 * rewriting them for a new placement of the regions (section 9.3).
 *
 * The caller lists its tables in directory order; xp_metadata_begin lays them out after the data area
 * (each at the next multiple of 8, then the directory) and gives each its place in one zeroed buffer.
 * The caller fills the tables' records; xp_metadata_put_entry_checks computes ENTR's check values from
 * ENTR and REGN as filled; xp_metadata_seal writes the directory (with every table's checksum) and the
 * footer. The recording writer (writer_meta.c) fills the tables from what it recorded; compress and
 * inflate (xp_metadata_rebuild) copy them from the source file and change only what placement moves. */
#ifndef XPACK_SRC_CACHE_WRITE_H
#define XPACK_SRC_CACHE_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "cachefile/cache_view.h"
#include "xpack_status.h"
#include "xpc_format.h"

typedef struct xp_table_out {
  uint32_t tag, record_size;
  uint64_t count;
  uint64_t offset; /* set by xp_metadata_begin: absolute file offset */
  uint8_t* bytes;  /* set by xp_metadata_begin: where its count * record_size bytes go */
} xp_table_out;

typedef struct xp_metadata_out {
  xp_table_out* tables; /* the caller's, in directory order */
  uint32_t table_count;
  uint8_t* tail;         /* metadata area followed by the footer; owned (xp_metadata_free) */
  size_t tail_size;      /* bytes of tail, footer included */
  uint64_t metadata_offset, metadata_size, dir_offset, file_size;
} xp_metadata_out;

/* Lays out `count` tables after a data area ending at data_end and allocates the zeroed tail. `name`
 * names the file in messages. Errors: XPACK_ERR_NOMEM. */
xpack_status xp_metadata_begin(xp_metadata_out* m, xp_table_out* tables, uint32_t count, uint64_t data_end,
                               const char* name, xpack_error* err);

/* The records of the table tagged `tag`, or NULL when the layout has none. */
uint8_t* xp_metadata_table(const xp_metadata_out* m, uint32_t tag);

/* Sets every ENTR record's check value: XXH3-64 of its first 32 bytes followed by the first 32 bytes of
 * the REGN record it names. Both tables must be present and every region index in range. */
void xp_metadata_put_entry_checks(xp_metadata_out* m);

/* Writes the directory and the footer (version major.minor, flags); the tables must be complete. */
void xp_metadata_seal(xp_metadata_out* m, uint16_t major, uint16_t minor, uint32_t flags);

void xp_metadata_free(xp_metadata_out* m);

/* ---- one record of a table, encoded (docs/FORMAT.md 5.2 to 5.8) ---- */

/* A provenance record (PROV, 5.5). */
typedef struct xp_provenance {
  uint32_t name; /* STRS offset */
  uint32_t kind; /* XPC_INPUT_* */
  uint64_t file_size, file_hash, program_size, program_hash;
} xp_provenance;

/* A region record (REGN, 5.2): xp_put_region, in cache_view.h, as the entry check hashes it. */
/* Every field but the check value (xp_metadata_put_entry_checks). */
void xp_put_entry(uint8_t* record, const xp_entry* entry);
void xp_put_provenance(uint8_t* record, const xp_provenance* input);
void xp_put_info(uint8_t* record, uint32_t key, uint32_t value);
void xp_put_family(uint8_t* record, const xp_family* family);
/* The bytes a string of len bytes takes in STRS (u32 length, the bytes, a NUL). */
uint64_t xp_string_size(uint32_t len);
/* Writes a string at its STRS place (the NUL is the zeroed buffer's). */
void xp_put_string(uint8_t* at, const char* text, uint32_t len);

typedef struct xp_header_fields {
  uint16_t major, minor;
  uint32_t flags, page_alignment, xnn_alignment;
  uint16_t arch;
  uint64_t data_offset, data_size;
} xp_header_fields;

/* Writes every field of the header into header[0, XPC_HEADER_SIZE), then its checksum; the reserved
 * fields keep the bytes they had (zero for a new file). */
void xp_header_put(uint8_t* header, const xp_header_fields* fields);

/* ---- a file's metadata for a new placement of its regions (compress, inflate) ---- */

/* The offsets of v's regions as the mappable form places them (region_place.h), from data_offset =
 * page_alignment; *data_end receives the end of the last region (data_offset when there is none).
 * offsets has room for v->regions.count values. Errors: XPACK_ERR_CORRUPT when a size does not fit a
 * file. */
xpack_status xp_mappable_offsets(const xp_view* v, const char* name, uint64_t* offsets, uint64_t* data_end,
                                 xpack_error* err);

typedef struct xp_rebuilt {
  uint8_t header[XPC_HEADER_SIZE];
  uint8_t* tail;            /* metadata area followed by the footer; owned, free() it */
  size_t tail_size;         /* bytes of tail, footer included */
  uint64_t metadata_offset; /* where tail goes */
  uint64_t file_size;
} xp_rebuilt;

/* Header, tables, directory and footer of v for regions placed at offsets[i] with stored sizes stored[i],
 * data area [data_offset, data_end), and the given flags: REGN offsets and stored sizes, ENTR check values,
 * the directory, every checksum. Every other byte is copied, tables of unknown tags included. v must have
 * passed the checks of cache_checks.h. Errors: XPACK_ERR_NOMEM. */
xpack_status xp_metadata_rebuild(const xp_view* v, const char* name, const uint64_t* offsets,
                                 const uint64_t* stored, uint64_t data_offset, uint64_t data_end, uint32_t flags,
                                 xp_rebuilt* out, xpack_error* err);

#endif
