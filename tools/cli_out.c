/* The report held back until the command's exit code is known (cli_common.h: cli_out). */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cli_common.h"

/* Held in a buffer of our own rather than open_memstream's: glibc's memory stream drops what it cannot find
 * the memory for and reports no error (neither ferror nor fclose), so a report larger than the memory left
 * was printed cut short with exit 0. Here a failed growth is remembered and the command fails instead. */
typedef struct held_report {
  char* bytes;
  size_t size, capacity;
  int out_of_memory;
} held_report;

static FILE* g_held;
static held_report g_report;

/* Once out of memory the rest is dropped but reported as written: the report is refused whole at the end,
 * and glibc's recovery from a failed cookie write crashed (seen under `ulimit -v`). */
static ssize_t held_write(void* cookie, const char* data, size_t n) {
  held_report* r = cookie;
  if (r->out_of_memory) return (ssize_t)n;
  if (n > r->capacity - r->size) {
    size_t capacity = r->capacity ? r->capacity : 4096;
    while (capacity - r->size < n) {
      if (capacity > SIZE_MAX / 2) {
        r->out_of_memory = 1;
        return (ssize_t)n;
      }
      capacity *= 2;
    }
    char* grown = realloc(r->bytes, capacity);
    if (grown == NULL) {
      r->out_of_memory = 1;
      return (ssize_t)n;
    }
    r->bytes = grown;
    r->capacity = capacity;
  }
  memcpy(r->bytes + r->size, data, n);
  r->size += n;
  return (ssize_t)n;
}

FILE* cli_out(void) { return g_held ? g_held : stdout; }

int cli_out_begin(void) {
  g_report = (held_report){0};
  g_held = fopencookie(&g_report, "w", (cookie_io_functions_t){.write = held_write});
  if (g_held != NULL) return 0;
  cli_error("cannot hold the report in memory: %s", strerror(errno));
  return XPACK_EXIT_FAILED;
}

int cli_out_end(int exit_code) {
  if (g_held == NULL) return exit_code;
  const int held_ok = fclose(g_held) == 0 && !g_report.out_of_memory;
  g_held = NULL;
  if (exit_code == XPACK_EXIT_OK || exit_code == XPACK_EXIT_CHECK_FAILED) {
    if (!held_ok) {
      cli_error("out of memory while holding the report (%zu bytes held): nothing is reported", g_report.size);
      exit_code = XPACK_EXIT_FAILED;
    } else {
      /* Names from files reach the terminal only defused (cli_common.h); a --json document holds no control
       * character (json.c escapes them), so this leaves it as it is. */
      cli_neutralize_controls(g_report.bytes, g_report.size, 1);
      /* Where stdout is a regular file, a report cut short (a full disk, ulimit -f) is taken back out of it: a
       * failed command leaves stdout as it found it (docs/CLI.md), not half a JSON document (found by a review). */
      /* Only a report that began at the file's end (`>`, `>>`) is cut off: truncating one written over old bytes
       * (`1<>file` at an offset before the end) would take those with it. */
      struct stat st;
      const int appending = (fcntl(STDOUT_FILENO, F_GETFL) & O_APPEND) != 0; /* `>>`: writes go to the end */
      off_t start = fstat(STDOUT_FILENO, &st) != 0 || !S_ISREG(st.st_mode) ? -1
                    : appending                                           ? st.st_size
                                                                          : lseek(STDOUT_FILENO, 0, SEEK_CUR);
      if (start >= 0 && start < st.st_size) start = -1;
      if ((g_report.size > 0 && fwrite(g_report.bytes, 1, g_report.size, stdout) != g_report.size) ||
          fflush(stdout) != 0) {
        const int e = errno;
        const int taken_back = start >= 0 && ftruncate(STDOUT_FILENO, start) == 0;
        if (taken_back) lseek(STDOUT_FILENO, start, SEEK_SET);
        cli_error("cannot write the report to stdout: %s%s", strerror(e), taken_back ? " (nothing of it is left there)" : "");
        exit_code = XPACK_EXIT_FAILED;
      }
    }
  }
  free(g_report.bytes);
  g_report = (held_report){0};
  return exit_code;
}
