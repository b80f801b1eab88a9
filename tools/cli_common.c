#include "cli_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char* g_program = "xpack";
int g_verbosity = 0;

void cli_neutralize_controls(char* s, size_t n, int keep_line_breaks) {
  unsigned char* u = (unsigned char*)s;
  for (size_t i = 0; i < n; i++) {
    if (u[i] == 0xc2 && i + 1 < n && u[i + 1] >= 0x80 && u[i + 1] <= 0x9f) {
      u[i] = u[i + 1] = '?';
      i++;
    } else if ((u[i] < 0x20 && !(keep_line_breaks && (u[i] == '\n' || u[i] == '\t'))) || u[i] == 0x7f) {
      u[i] = '?';
    }
  }
}

/* The copies cli_name made: a ring, each freed when its place comes round again (names are printed at once). */
#define CLI_NAME_RING 8
static char* g_name_ring[CLI_NAME_RING];
static unsigned g_name_next;

const char* cli_name(const char* s) {
  if (s == NULL) return NULL;
  const unsigned char* u = (const unsigned char*)s;
  size_t n = 0;
  int controls = 0;
  for (; u[n]; n++) controls |= u[n] < 0x20 || u[n] == 0x7f || (u[n] == 0xc2 && u[n + 1] >= 0x80 && u[n + 1] <= 0x9f);
  if (!controls) return s;
  char* copy = malloc(n + 1);
  if (copy == NULL) return "<a name with control characters>";
  memcpy(copy, s, n + 1);
  cli_neutralize_controls(copy, n, 0);
  free(g_name_ring[g_name_next]);
  g_name_ring[g_name_next] = copy;
  g_name_next = (g_name_next + 1) % CLI_NAME_RING;
  return copy;
}

static void put_line(FILE* out, const char* prefix, const char* fmt, va_list ap) {
  char small[1024];
  va_list again;
  va_copy(again, ap);
  const int n = vsnprintf(small, sizeof small, fmt, ap);
  char* text = small;
  if (n >= (int)sizeof small) {
    text = malloc((size_t)n + 1);
    if (text != NULL) vsnprintf(text, (size_t)n + 1, fmt, again);
    else text = small; /* out of memory: the message cut short rather than lost */
  }
  va_end(again);
  if (n > 0) cli_neutralize_controls(text, strlen(text), 0);
  fprintf(out, "%s%s\n", prefix, n >= 0 ? text : fmt);
  if (text != small) free(text);
}

void cli_line(FILE* out, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  put_line(out, "", fmt, ap);
  va_end(ap);
}

void cli_error(const char* fmt, ...) {
  char prefix[64];
  snprintf(prefix, sizeof prefix, "%s: ", g_program);
  va_list ap;
  va_start(ap, fmt);
  put_line(stderr, prefix, fmt, ap);
  va_end(ap);
}

void cli_message(void* context, xpack_message_kind kind, const char* text) {
  (void)context;
  switch (kind) {
    case XPACK_MESSAGE_NOTE:
      if (g_verbosity >= 0) cli_line(stderr, "note: %s", text);
      break;
    case XPACK_MESSAGE_DETAIL:
      if (g_verbosity > 0) cli_line(stderr, "%s", text);
      break;
    case XPACK_MESSAGE_WARNING: cli_line(stderr, "warning: %s", text); break;
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
