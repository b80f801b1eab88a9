/*
 * xpack_transport.h - the transport form of a cache file, for downloads and app bundles.
 *
 * In the transport form (docs/FORMAT.md section 9) every region is one zstd frame; the header, the
 * tables and the footer keep their meaning. The loader refuses such a file (XPACK_ERR_TRANSPORT, with a
 * message naming `xpack inflate`): it must first be inflated into the mappable form, typically once at
 * install time on the device.
 *
 * Two libraries provide this header's functions:
 *   xpack_inflate  every function here. Depends on libpack's common base and cache-file view (xpack_common,
 *                  xpack_cachefile), zstd and xxHash; not on the loader, XNNPACK or the packer, so an app
 *                  can link it for install-time use (a program that calls only xpack_inflate_file links
 *                  only zstd's decompressor).
 *   xpack_pack     everything, this included.
 *
 * Every function writes its output atomically: a temporary file beside out_path, fsync, rename over
 * out_path, fsync of the directory. On any error out_path is left as it was and no temporary file
 * remains. in_path and out_path may not name the same file, by any path or link: XPACK_ERR_ARG, as writing
 * it would destroy the input.
 */
#ifndef XPACK_TRANSPORT_H
#define XPACK_TRANSPORT_H

#include <stdint.h>

#include "xpack_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* zstd levels accepted by xpack_compress_file. Levels above 19 ("ultra") would need windows larger
 * than the 8 MiB the format allows a frame (docs/FORMAT.md 9.2). */
#define XPACK_ZSTD_LEVEL_MIN 1
#define XPACK_ZSTD_LEVEL_MAX 19
#define XPACK_ZSTD_LEVEL_DEFAULT 19

typedef struct xpack_transport_stats {
  uint64_t regions;       /* regions converted */
  uint64_t region_bytes;  /* sum of the regions' sizes (what XNNPACK is handed) */
  uint64_t frame_bytes;   /* sum of the regions' zstd frames */
  uint64_t input_size;    /* bytes of in_path */
  uint64_t output_size;   /* bytes of out_path */
} xpack_transport_stats;

/* Makes the transport form of the mappable cache file in_path: each region compressed at `level`
 * (XPACK_ZSTD_LEVEL_MIN..MAX) into one zstd frame that records its content size. Before anything is
 * written, the input passes every check of xpack_verify_file but the region bytes (metadata and table
 * checksums, region placement, every entry's strings, key hash, order, family and check value), and each
 * region's XXH3-64 is checked as it is compressed: a damaged input is refused at its first problem, never
 * converted. stats may be NULL.
 * Errors: XPACK_ERR_ARG (bad level, NULL path, in_path already in the transport form, out_path the same
 * file as in_path or not a regular file, or a path no file can be made at: a trailing '/', a missing folder,
 * a name too long; all checked before anything is read or written), XPACK_ERR_IO (also a folder that may not
 * be written into, found before anything is read),
 * XPACK_ERR_NOMEM, and for a bad input the statuses of xpack_file_open or XPACK_ERR_CORRUPT (the message
 * names the region, entry or table and its offset). */
xpack_status xpack_compress_file(const char* in_path, const char* out_path, int level, xpack_transport_stats* stats,
                                 xpack_error* err);

/* xpack_compress_file with regions compressed by up to `threads` threads (1..XPACK_COMPRESS_THREADS_MAX).
 * The output is the same bytes for every thread count. Each thread holds one zstd context and the frame
 * it is making (regions above 64 MiB are streamed by one thread, never held). Errors: as
 * xpack_compress_file, and XPACK_ERR_ARG for a thread count out of range. */
#define XPACK_COMPRESS_THREADS_MAX 1024
xpack_status xpack_compress_file_threads(const char* in_path, const char* out_path, int level, int threads,
                                         xpack_transport_stats* stats, xpack_error* err);

/* Turns the transport-form cache in_path into the mappable form at out_path, laid out exactly as the
 * writer lays out a cache (so inflating the transport form of a file gives that file back byte for byte).
 * Checks the structure (as xpack_file_open), every check of xpack_verify_file but the region bytes (as
 * xpack_compress_file) with the frames' placement (back to back, filling the data area), and for every
 * region that it is exactly one zstd frame of stored_size bytes, declaring `size`
 * as its content size, needing at most an 8 MiB window and no dictionary, and that it decompresses to
 * bytes whose XXH3-64 is the region's.
 * Memory: one region is streamed at a time through a 1 MiB buffer; besides the read-only mapping of
 * in_path, the heap holds the decompression context (at most the 8 MiB window), that buffer and a copy
 * of the metadata area, whatever the size of the regions. stats may be NULL.
 * Errors: XPACK_ERR_ARG (NULL path, in_path already mappable, out_path the same file as in_path or not a
 * regular file, or a path no file can be made at, as xpack_compress_file: checked before anything is read or
 * written), XPACK_ERR_IO (also a folder that may not be written into, or a file system without room for the
 * size the metadata declares, checked before any byte is written), XPACK_ERR_NOMEM, and for a
 * bad input the statuses of xpack_file_open or XPACK_ERR_CORRUPT naming the region and its offset. */
xpack_status xpack_inflate_file(const char* in_path, const char* out_path, xpack_transport_stats* stats,
                                xpack_error* err);

/* As xpack_inflate_file, with the transport-form cache stored as the bytes [offset, offset + size) of the
 * open file fd: an app bundle's asset, with the descriptor, offset and length Android's
 * AAsset_openFileDescriptor64 gives (the asset stored, not compressed again: zstd frames do not shrink).
 * name names the input in messages ("base.apk!/assets/model.xpc"); fd stays the caller's. out_path may not be
 * fd's own file (XPACK_ERR_ARG). Errors: as xpack_inflate_file, XPACK_ERR_ARG also for a negative fd or a NULL
 * name, XPACK_ERR_TRUNCATED for a range that ends past the file, XPACK_ERR_IO when fd is not a regular file. */
xpack_status xpack_inflate_range(int fd, uint64_t offset, uint64_t size, const char* name, const char* out_path,
                                 xpack_transport_stats* stats, xpack_error* err);

#ifdef __cplusplus
}
#endif
#endif /* XPACK_TRANSPORT_H */
