/*
 * xpack_status.h - the error codes every libpack function returns.
 *
 * Every fallible libpack function returns an xpack_status and, when the caller passes a non-NULL
 * xpack_error*, fills it with the same status and a one-line message that names the file, the
 * offset or field, and what was expected. The message is owned by the caller's xpack_error. err may
 * be NULL (then only the status tells what happened). A function that creates an object through an `out`
 * parameter sets *out to NULL on every failure, a caller error included (when out itself is not NULL), so that
 * freeing *out after any call is safe.
 *
 * NULL arguments, the same way in every public function that takes a handle (xpack_cache*, xpack_writer*,
 * xpack_file*, an ExecuTorch program, graph or summary, a replay):
 *   - a function returning xpack_status returns XPACK_ERR_ARG for a NULL handle or a NULL required pointer;
 *   - a void function does nothing with a NULL handle (close, free, abort, unbind, release); one that fills
 *     an output zeroes it for a NULL handle and does nothing for a NULL output;
 *   - a function returning a pointer, a count or an index returns NULL, 0 or -1 for a NULL handle.
 * This header depends on nothing but the C standard library.
 */
#ifndef XPACK_STATUS_H
#define XPACK_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum xpack_status {
  XPACK_OK = 0,
  XPACK_ERR_IO = 1,           /* open, read, write, mmap, fsync or rename failed (errno text in message) */
  XPACK_ERR_NOT_XPACK = 2,    /* the file has no xpack cache magic */
  XPACK_ERR_VERSION = 3,      /* a cache file of an unsupported major version */
  XPACK_ERR_TRUNCATED = 4,    /* the file is shorter than its own structure says */
  XPACK_ERR_CORRUPT = 5,      /* a field, bound or checksum of a cache file is wrong */
  XPACK_ERR_INCOMPATIBLE = 6, /* built for another architecture, alignment or XNNPACK build (strict open) */
  XPACK_ERR_TRANSPORT = 7,    /* a zstd transport-form cache: run `xpack inflate` first */
  XPACK_ERR_NOMEM = 8,        /* an allocation failed (memory; also file descriptors: EMFILE, ENFILE) */
  XPACK_ERR_ARG = 9,          /* a caller error: NULL pointer, bad flag, call out of order */
  XPACK_ERR_XNNPACK = 10,     /* an XNNPACK call failed (its status is in the message) */
  XPACK_ERR_BAD_INPUT = 11,   /* a malformed model file: .pte, .ptd or XNNPACK delegate blob */
  XPACK_ERR_UNSUPPORTED = 12, /* well-formed input that this xpack cannot handle (named in the message) */
  XPACK_ERR_MISMATCH = 13,    /* two things that must agree do not (model vs cache, bytes vs bytes) */
} xpack_status;

#define XPACK_ERROR_MESSAGE_SIZE 4096 /* room for a message that names long paths (once 512: cut mid-path) */

typedef struct xpack_error {
  xpack_status status;
  char message[XPACK_ERROR_MESSAGE_SIZE];
} xpack_error;

/* A stable, lower-case name for a status ("ok", "io", "corrupt", ...). Never NULL. */
const char* xpack_status_name(xpack_status status);

/* The path of the file libpack has mapped at `address` (a program, a data file or a cache it reads), or
 * NULL when the address is in none of them; *offset (when not NULL) gets the address's offset in that file.
 * Async-signal-safe: it is meant for a SIGBUS handler. A file truncated while it is mapped raises SIGBUS
 * at the first touch of a page past its new end, a signal and not an error libpack could return; the
 * handler can name the file and the offset, and stop without writing anything (the `xpack` tool does:
 * exit 3). The path is libpack's copy, valid until the file is unmapped. */
const char* xpack_mapped_file_at(const void* address, unsigned long long* offset);

/* Removes the temporary files libpack has given a name and not yet renamed over their targets or removed. An
 * output is written to a temporary file beside it and renamed into place (atomic replacement); where the file
 * system allows (Linux's O_TMPFILE) that file has no name until the instant of the rename, elsewhere (vfat,
 * exfat, some network and FUSE file systems, no /proc) it is named ".xpack-XXXXXX.tmp" from its creation.
 * Async-signal-safe: it is meant for a handler of SIGINT, SIGTERM or SIGHUP, which then ends the process (the
 * `xpack` tool does, and re-raises the signal); the outputs keep their previous contents. Do not call it while
 * a libpack function is writing an output on another thread for any other reason. */
void xpack_remove_temporary_files(void);

#ifdef __cplusplus
}
#endif
#endif /* XPACK_STATUS_H */
