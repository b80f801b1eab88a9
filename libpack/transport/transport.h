/* Internals shared by compress (transport_compress.c), inflate (inflate.c) and verify: the decoding of one
 * region's zstd frame and the file-to-file frame of a conversion. A source is checked with
 * xp_check_first (cachefile/cache_checks.h) and its metadata rebuilt for the new placement of its regions
 * with xp_metadata_rebuild (cachefile/cache_write.h). Format: docs/FORMAT.md section 9. */
#ifndef XPACK_SRC_TRANSPORT_H
#define XPACK_SRC_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "cachefile/cache_view.h"
#include "common/safe_write.h"
#include "xpack_status.h"
#include "xpack_transport.h"

#define XT_BUFFER_SIZE (1u << 20)
#define XT_WINDOW_LOG_MAX 23 /* 8 MiB: the largest window a region's frame may need */

/* Where converted bytes go: a file (xp_transport_safe_file_sink) or, in the fuzzer, a bounded discard. Returns
 * XPACK_OK or an error it has described in err. */
typedef struct xp_transport_sink {
  xpack_status (*write)(void* context, const uint8_t* bytes, size_t n, uint64_t offset, xpack_error* err);
  void* context;
  /* Whether the output has room for file_size bytes, asked before any is written; NULL: no limit to check. */
  xpack_status (*room)(void* context, uint64_t file_size, xpack_error* err);
} xp_transport_sink;

/* ---- one region's frame (inflate_frame.c) ---- */

typedef struct xp_transport_decoder {
  void* dctx; /* ZSTD_DCtx */
  uint8_t* buffer;
  int release_input; /* the view is a read-only file mapping: drop frame pages from the process once read */
} xp_transport_decoder;

xpack_status xp_transport_decoder_init(xp_transport_decoder* d, xpack_error* err);
void xp_transport_decoder_free(xp_transport_decoder* d);

/* Decodes region r of the transport view v, which must lie inside the file: checks the frame as
 * xp_transport_check_region does (one zstd frame of r->stored_size bytes with content size r->size, no dictionary,
 * a window of at most 2^XT_WINDOW_LOG_MAX bytes, blocks that can hold r->size bytes), that it decodes to r->size
 * bytes, and their XXH3-64 against r->hash.
 * The bytes go to sink at out_offset onwards (sink may be NULL: check only).
 * Returns XPACK_ERR_CORRUPT with the fault in what (no file or region prefix: the caller adds it), or the
 * sink's error (described in err). */
/* The frame of region r as check_frame and decoding would find it, without decoding: magic, header, declared content
 * equal to r->size, window, dictionary, extent, and blocks that can hold r->size bytes. inflate checks every region
 * so before it asks the file system for room. Errors: XPACK_ERR_CORRUPT, `what` saying why. */
xpack_status xp_transport_check_region(const xp_view* v, const xp_region* r, char* what, size_t what_size);
xpack_status xp_transport_decode_region(xp_transport_decoder* d, const xp_view* v, const xp_region* r, const xp_transport_sink* sink,
                                        uint64_t out_offset, char* what, size_t what_size, xpack_error* err);

/* ---- inflate of a view (inflate.c) ---- */

/* Everything xpack_inflate_file does between reading the input and committing the output: checks, the
 * new layout, every region decoded into sink, header and metadata written to sink. *file_size receives
 * the size the output must be truncated to. When v->base is a read-only file mapping, input_is_mapped
 * lets inflate drop frame pages from the process once decoded, so memory does not grow with regions. */
xpack_status xp_transport_inflate_view(const xp_view* v, const char* name, const xp_transport_sink* sink, int input_is_mapped,
                                       uint64_t* file_size, xpack_transport_stats* stats, xpack_error* err);

/* ---- a whole conversion, file to file (transport_convert.c) ---- */

/* Converts view v (named name; input_is_mapped as for xp_transport_inflate_view) into sink, setting *file_size. */
typedef xpack_status (*xp_transport_convert_fn)(void* context, const xp_view* v, const char* name, int input_is_mapped,
                                      const xp_transport_sink* sink, uint64_t* file_size, xpack_transport_stats* stats,
                                      xpack_error* err);

/* A sink writing to the temporary file of f. */
xp_transport_sink xp_transport_safe_file_sink(xp_safe_file* f);

/* Maps in_path, checks that it is a cache in the transport form (input_is_transport) or the mappable one
 * (else XPACK_ERR_ARG "<in_path>: <wrong_form>"), converts it with convert into a temporary file beside
 * out_path and renames that into place; on any failure out_path is left as it was. */
xpack_status xp_transport_convert_file(const char* in_path, const char* out_path, int input_is_transport,
                                       const char* wrong_form, xp_transport_convert_fn convert, void* context,
                                       xpack_transport_stats* stats, xpack_error* err);
/* As xp_transport_convert_file, with the input the bytes [offset, offset + size) of the open file fd (a cache
 * stored inside an archive), named `name`; out_path may not be fd's own file. */
xpack_status xp_transport_convert_range(int fd, uint64_t offset, uint64_t size, const char* name, const char* out_path,
                                        int input_is_transport, const char* wrong_form, xp_transport_convert_fn convert,
                                        void* context, xpack_transport_stats* stats, xpack_error* err);

#endif
