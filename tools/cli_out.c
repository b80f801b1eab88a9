/* The report held back until the command's exit code is known (cli_common.h: cli_out). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"

static FILE* g_held;
static char* g_held_bytes;
static size_t g_held_size;

FILE* cli_out(void) { return g_held ? g_held : stdout; }

int cli_out_begin(void) {
  g_held = open_memstream(&g_held_bytes, &g_held_size);
  if (g_held != NULL) return 0;
  cli_error("cannot hold the report in memory: %s", strerror(errno));
  return XPACK_EXIT_FAILED;
}

int cli_out_end(int exit_code) {
  if (g_held == NULL) return exit_code;
  const int held_ok = fclose(g_held) == 0;
  g_held = NULL;
  if (exit_code == XPACK_EXIT_OK || exit_code == XPACK_EXIT_CHECK_FAILED) {
    if (!held_ok) {
      cli_error("out of memory while holding the report");
      exit_code = XPACK_EXIT_FAILED;
    } else {
      /* Names from files reach the terminal only defused (cli_common.h); a --json document holds no control
       * character (json.c escapes them), so this leaves it as it is. */
      cli_neutralize_controls(g_held_bytes, g_held_size, 1);
      if (fwrite(g_held_bytes, 1, g_held_size, stdout) != g_held_size || fflush(stdout) != 0) {
        cli_error("cannot write the report to stdout: %s", strerror(errno));
        exit_code = XPACK_EXIT_FAILED;
      }
    }
  }
  free(g_held_bytes);
  g_held_bytes = NULL;
  g_held_size = 0;
  return exit_code;
}
