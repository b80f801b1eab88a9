/* An input file truncated while xpack has it mapped: the first touch of a page past its new end raises
 * SIGBUS. The handler names the file and the offset, and exits 3 (an input went bad) without writing
 * anything: outputs are temporary files without a name until they are complete (libpack/common/temp_files.h),
 * and what the command printed to stdout is still held (cli_out.c). Only async-signal-safe calls here. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "xpack_status.h"

static void put(const char* text) {
  size_t len = strlen(text);
  while (len > 0) {
    ssize_t n = write(STDERR_FILENO, text, len);
    if (n <= 0) return;
    text += n, len -= (size_t)n;
  }
}

static void put_number(unsigned long long v) {
  char digits[24];
  size_t at = sizeof digits;
  digits[--at] = '\0';
  do {
    digits[--at] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  put(digits + at);
}

static void on_sigbus(int sig, siginfo_t* info, void* context) {
  (void)sig, (void)context;
  unsigned long long offset = 0;
  const char* path = xpack_mapped_file_at(info->si_addr, &offset);
  put("xpack: ");
  if (path != NULL) {
    put(path);
    put(": changed while xpack read it: the read at offset ");
    put_number(offset);
    put(" is past its end now (the file was truncated after it was opened)");
  } else {
    put("a mapped file changed while xpack read it (SIGBUS: a read past its end now)");
  }
  put("; nothing was written\n");
  _exit(XPACK_EXIT_BAD_INPUT);
}

void cli_catch_truncated_inputs(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_sigbus;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGBUS, &action, NULL);
}
