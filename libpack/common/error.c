#include "common/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

xpack_status xp_fail(xpack_error* err, xpack_status status, const char* fmt, ...) {
  if (err != NULL) {
    va_list ap;
    va_start(ap, fmt);
    err->status = status;
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
  }
  return status;
}

xpack_status xp_status_of_errno(int e) {
  return e == ENOMEM || e == EMFILE || e == ENFILE ? XPACK_ERR_NOMEM : XPACK_ERR_IO;
}
