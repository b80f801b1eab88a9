/*
 * xpack.h - libpack: pack XNNPACK weights ahead of time into an xpack cache file, inspect and verify it.
 *
 * Three parts, each usable alone:
 *   - the recording writer (xpack_writer_*): an XNNPACK weights-cache provider that records every weight
 *     XNNPACK packs during xnn_create_runtime_v4 and writes a cache file atomically;
 *   - inspection (xpack_file_*): read-only access to every field of a cache file, for `xpack dump`;
 *   - verification (xpack_verify_file): every bound and checksum, one report per problem.
 * The runtime side (serving a cache to XNNPACK) is xpack_loader.h, included here.
 * ExecuTorch program reading lives in xpack_executorch.h.
 */
#ifndef XPACK_H
#define XPACK_H

#include <stddef.h>
#include <stdint.h>

#include "xpack_loader.h"
#include "xpack_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XPACK_XNNPACK_VERSION "0.0~git20241108.4ea82e5" /* the XNNPACK source this xpack is built against */

/* ============================== the recording writer ============================== */

typedef struct xpack_writer xpack_writer;

typedef struct xpack_writer_options {
  uint32_t page_alignment; /* alignment of large regions: 0 = 4096; 16384 for Apple targets */
} xpack_writer_options;

/* Starts a cache file for out_path. Packed weights are streamed to a temporary file in the same directory
 * (never all in memory); nothing appears at out_path until xpack_writer_finish renames it into place.
 * options may be NULL. Errors: XPACK_ERR_ARG, XPACK_ERR_IO, XPACK_ERR_NOMEM. */
xpack_status xpack_writer_create(const char* out_path, const xpack_writer_options* options, xpack_writer** out,
                                 xpack_error* err);

/* Binds a raw weight pointer to its identity (1..1023 bytes, copied), exactly as xpack_cache_bind.
 * Packed weights whose kernel (or bias) pointer is unbound are packed but not recorded.
 * Errors: XPACK_ERR_ARG, XPACK_ERR_NOMEM. */
xpack_status xpack_writer_bind(xpack_writer* w, const void* raw, const char* identity, size_t identity_len);
void xpack_writer_unbind_all(xpack_writer* w);

/* The provider to pass to xnn_create_runtime_v4; one writer serves any number of runtimes (a weight
 * XNNPACK asks for again is served from what was recorded, so it is packed once). The runtimes must be
 * deleted before xpack_writer_finish or xpack_writer_abort. Owned by the writer. */
struct xnn_weights_cache_provider* xpack_writer_provider(xpack_writer* w);

/* Records an input file the cache is built from (provenance and model identity). kind: XPACK_INPUT_*.
 * program_size/program_hash describe the program flatbuffer region of a .pte (0 otherwise). */
#define XPACK_INPUT_PTE 1
#define XPACK_INPUT_PTD 2
#define XPACK_INPUT_OTHER 3
xpack_status xpack_writer_add_input(xpack_writer* w, const char* name, uint32_t kind, uint64_t file_size,
                                    uint64_t file_hash, uint64_t program_size, uint64_t program_hash);

/* Adds a free-form key/value note to the INFO table (both copied). */
xpack_status xpack_writer_add_info(xpack_writer* w, const char* key, const char* value);

typedef struct xpack_writer_stats {
  uint64_t lookups;        /* look_up calls from XNNPACK */
  uint64_t reused;         /* answered from what this writer already recorded (packed once) */
  uint64_t reused_bytes;   /* bytes of those answers: packing (or storing) they saved */
  uint64_t inserts;        /* packed weights handed over by XNNPACK */
  uint64_t entries;        /* distinct keys recorded */
  uint64_t regions;        /* distinct packed byte strings stored */
  uint64_t packed_bytes;   /* bytes of every recorded packed weight (before deduplication) */
  uint64_t stored_bytes;   /* bytes of regions stored */
  uint64_t unbound;        /* packed weights not recorded: kernel or bias pointer never bound */
  uint64_t unbound_bytes;
  uint64_t nondeterministic; /* a key packed twice to different bytes (kept out of the file) */
} xpack_writer_stats;
void xpack_writer_stats_get(xpack_writer* w, xpack_writer_stats* out);

/* Writes the index and tables, fsyncs, renames the temporary file to out_path and fsyncs the directory.
 * Frees the writer in every case. Errors: XPACK_ERR_IO, XPACK_ERR_NOMEM, XPACK_ERR_ARG. */
xpack_status xpack_writer_finish(xpack_writer* w, xpack_error* err);

/* Removes the temporary file and frees the writer; out_path is left as it was. NULL is ignored. */
void xpack_writer_abort(xpack_writer* w);

/* ============================== inspection ============================== */

typedef struct xpack_file xpack_file;

/* Maps a cache file read-only and validates its structure (as xpack_cache_open, but transport-form
 * files are accepted and compatibility is reported rather than checked).
 * Errors: as xpack_cache_open, except XPACK_ERR_TRANSPORT and XPACK_ERR_INCOMPATIBLE. */
xpack_status xpack_file_open(const char* path, xpack_file** out, xpack_error* err);
void xpack_file_close(xpack_file* f);

typedef struct xpack_file_info {
  uint16_t major, minor;
  uint32_t flags; /* 1 = transport form */
  uint32_t page_alignment, xnn_alignment;
  uint16_t arch;
  const char* arch_name;
  uint64_t file_size, data_offset, data_size, metadata_offset, metadata_size;
  uint64_t region_count, entry_count, input_count, info_count, family_count;
  const uint8_t* build_id; /* points into the file */
  size_t build_id_size;
  int build_id_matches; /* 1 when this process's XNNPACK has the same build identifier */
  uint64_t stored_bytes;     /* sum of region sizes */
  uint64_t referenced_bytes; /* sum over entries of their region's size: what XNNPACK would hold without dedup */
} xpack_file_info;
void xpack_file_get_info(const xpack_file* f, xpack_file_info* out);

typedef struct xpack_file_region {
  uint64_t offset, stored_size, size, hash;
} xpack_file_region;
void xpack_file_get_region(const xpack_file* f, uint64_t index, xpack_file_region* out); /* index < count */
/* The region's bytes in the mapping (stored form), or NULL if its record is out of bounds. */
const uint8_t* xpack_file_region_bytes(const xpack_file* f, uint64_t index);

typedef struct xpack_file_entry {
  uint32_t seed;
  const char* kernel; /* NUL-terminated, points into the file; "<bad string>" if out of bounds */
  const char* bias;   /* NULL when the weight has no bias */
  uint32_t region;
  uint32_t family;
  uint32_t flags;
  int sound; /* 1 when the entry passes its check and points at a sound region */
} xpack_file_entry;
void xpack_file_get_entry(const xpack_file* f, uint64_t index, xpack_file_entry* out); /* index < count */

/* Finds the entry for (seed, kernel identity, bias identity or NULL); returns its index, or -1 when the
 * file has no sound entry with that key. */
int64_t xpack_file_find(const xpack_file* f, uint32_t seed, const char* kernel, const char* bias);

typedef struct xpack_file_input {
  const char* name;
  uint32_t kind;
  uint64_t file_size, file_hash, program_size, program_hash;
} xpack_file_input;
void xpack_file_get_input(const xpack_file* f, uint64_t index, xpack_file_input* out);
void xpack_file_get_info_pair(const xpack_file* f, uint64_t index, const char** key, const char** value);

/* ============================== verification ============================== */

/* Called once per problem: `where` names the place (e.g. "region 3 at offset 8192"), `what` the fault. */
typedef void (*xpack_problem_fn)(void* context, const char* where, const char* what);

/* Checks everything: structure and bounds (as open), the metadata and every table checksum, every region's
 * bounds, alignment, overlap and XXH3, every entry's strings, region, check value, order and key hash.
 * Returns XPACK_OK after a complete check (problems counted in *problem_count, 0 = sound) or the error that
 * stopped it from opening the file (then reported once through fn as well). */
xpack_status xpack_verify_file(const char* path, xpack_problem_fn fn, void* context, uint64_t* problem_count,
                               xpack_error* err);

#ifdef __cplusplus
}
#endif
#endif /* XPACK_H */
