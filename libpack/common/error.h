/* Internal helpers to fill an xpack_error: a formatted message, and the status of a failed system call. */
#ifndef XPACK_SRC_ERROR_H
#define XPACK_SRC_ERROR_H

#include "xpack_status.h"

#if defined(__GNUC__)
#define XPACK_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define XPACK_PRINTF(a, b)
#endif

/* Sets err (if not NULL) to status and the formatted message; returns status. */
xpack_status xp_fail(xpack_error* err, xpack_status status, const char* fmt, ...) XPACK_PRINTF(3, 4);

/* The status of a failed system call's errno: NOMEM for memory and for descriptors (ENOMEM, EMFILE, ENFILE: what
 * the process or the machine lacks, not what the file is), IO for everything else. */
xpack_status xp_status_of_errno(int e);

#endif
