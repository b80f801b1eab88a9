/*
 * xpack_archive.h - caches stored inside zip archives: an Android APK's assets, an AAB's modules, a .zip.
 *
 * An app that ships its cache as an asset opens it where it lies, with xpack_cache_open_fd and the descriptor,
 * offset and size Android's AAsset_openFileDescriptor64 gives; that works only for an asset stored, not
 * compressed, and it maps the asset in place only when its offset is a multiple of XNNPACK's alignment.
 * These functions find a member in an archive and say where its bytes lie and how they are stored, so that a
 * build step (and `xpack verify app.apk!/assets/model.xpc`) can check, before the app ships, what the device
 * will find. They read the archive's central directory and the member's local header with pread, and never
 * map or change the archive.
 *
 * Read as libziparchive (Android's own reader) reads: the last end-of-central-directory record within the
 * last 65,557 bytes, which with its comment must end the file, Zip64 when its fields say so, one disk only, the
 * first member at offset 0, names without zero bytes and in UTF-8 form compared byte for byte, local headers
 * agreeing with the central directory on method, name, CRC and sizes (unless a data descriptor follows), and
 * an archive naming one member twice refused (two readers could otherwise disagree on which one it holds).
 * Errors of each function: XPACK_ERR_BAD_INPUT naming the record and its offset for any of these.
 */
#ifndef XPACK_ARCHIVE_H
#define XPACK_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "xpack_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XPACK_ARCHIVE_STORED 0u   /* method: the member's bytes are in the archive as they are */
#define XPACK_ARCHIVE_DEFLATED 8u /* method: compressed; no descriptor, offset or mapping can reach its bytes */

/* A member of an archive, from its central directory record and its local header. */
typedef struct xpack_archive_member {
  uint64_t data_offset; /* the member's first byte in the archive: after its local header, name and extra field */
  uint64_t stored_size; /* its bytes in the archive (compressed size) */
  uint64_t size;        /* its bytes once extracted; equal to stored_size when stored */
  uint16_t method;      /* XPACK_ARCHIVE_STORED, XPACK_ARCHIVE_DEFLATED, or another zip method */
  uint8_t looks_like_cache; /* stored, and its first 8 bytes are a cache file's magic */
} xpack_archive_member;

/* Finds the member named `member` (its whole name, as stored: "assets/model.xpc") in the zip archive open as
 * fd (read with pread from its start; archive_name in messages) and fills *out. fd stays the caller's.
 * Errors: XPACK_ERR_ARG (NULL argument, negative fd), XPACK_ERR_IO (a failed read; fd not a regular file),
 * XPACK_ERR_NOMEM, XPACK_ERR_BAD_INPUT (not a zip archive; a record, size or offset that does not fit the
 * archive, with its offset and what was expected; no member of that name; two members of one name, whichever;
 * a local header that disagrees with the central directory on the name or the method), XPACK_ERR_UNSUPPORTED
 * (an archive split over several disks; an encrypted member; a central directory over 64 MiB). */
xpack_status xpack_archive_find(int fd, const char* archive_name, const char* member, xpack_archive_member* out,
                                xpack_error* err);

/* Called by xpack_archive_each for each member, in the central directory's order, with its name (not
 * NUL-terminated, as stored in the archive: it may hold any byte) and what xpack_archive_find would give for
 * it. Return 0 to go on, anything else to stop (xpack_archive_each then returns XPACK_OK). */
typedef int (*xpack_archive_member_fn)(void* context, const char* name, size_t name_length,
                                       const xpack_archive_member* member);

/* Calls fn for every member of the archive open as fd. Checks each member as xpack_archive_find checks the one
 * it finds. Errors: as xpack_archive_find; fn has been called for the members before
 * the one in error. */
xpack_status xpack_archive_each(int fd, const char* archive_name, xpack_archive_member_fn fn, void* context,
                                xpack_error* err);

#ifdef __cplusplus
}
#endif
#endif /* XPACK_ARCHIVE_H */
