/* Internal helper to fill an xpack_error with a formatted message. */
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

#endif
