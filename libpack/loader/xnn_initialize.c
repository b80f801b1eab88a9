/* Initializing XNNPACK, with a message that says what its failure may mean. */
#include <xnnpack.h>

#include "common/error.h"
#include "loader/xnn_compat.h"
#include "xpack_loader.h"

xpack_status xpack_initialize_xnnpack(xpack_error* err) {
  const enum xnn_status status = xnn_initialize(NULL);
  if (status == xnn_status_success) return XPACK_OK;
  /* XNNPACK says "unsupported hardware" also when cpuinfo could not describe the CPU: out of memory, among other
   * reasons (cpuinfo then prints why on stderr). */
  return xp_fail(err, xp_xnn_failure(status), "xnn_initialize failed (status %d: %s)%s", (int)status,
                 xp_xnn_status_text(status),
                 status == xnn_status_unsupported_hardware
                     ? ": XNNPACK does not support this CPU, or cpuinfo could not describe it (see its message, if any)"
                     : "");
}
