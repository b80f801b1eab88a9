#include "cli_common.h"

#include <stdarg.h>
#include <stdio.h>

const char* g_program = "xpack";
int g_verbosity = 0;

void cli_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", g_program);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

void cli_message(void* context, xpack_message_kind kind, const char* text) {
  (void)context;
  switch (kind) {
    case XPACK_MESSAGE_NOTE:
      if (g_verbosity >= 0) fprintf(stderr, "note: %s\n", text);
      break;
    case XPACK_MESSAGE_DETAIL:
      if (g_verbosity > 0) fprintf(stderr, "%s\n", text);
      break;
    case XPACK_MESSAGE_WARNING: fprintf(stderr, "warning: %s\n", text); break;
    case XPACK_MESSAGE_ERROR: cli_error("%s", text); break;
  }
}

int cli_exit_for_status(xpack_status status) {
  switch (status) {
    case XPACK_OK: return XPACK_EXIT_OK;
    case XPACK_ERR_ARG: return XPACK_EXIT_USAGE;
    case XPACK_ERR_NOMEM:
    case XPACK_ERR_XNNPACK: return XPACK_EXIT_FAILED;
    default: return XPACK_EXIT_BAD_INPUT;
  }
}

const char* cli_bytes(uint64_t bytes, char buf[32]) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    u++;
  }
  if (u == 0) snprintf(buf, 32, "%llu B", (unsigned long long)bytes);
  else snprintf(buf, 32, "%.1f %s", v, units[u]);
  return buf;
}
