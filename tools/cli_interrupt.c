/* A command interrupted (SIGINT, SIGTERM, SIGHUP) leaves no temporary file: where the file system gives it a name
 * from its creation (no O_TMPFILE: vfat, exfat, some network and FUSE file systems), an interrupted pack, inflate
 * or export left a ".xpack-XXXXXX.tmp" of the size written so far until the next xpack wrote into that folder
 * (found by a review). The handler removes them and lets the signal end the process as it would have; the
 * outputs keep their previous contents. */
#include <signal.h>
#include <string.h>

#include "cli_common.h"
#include "xpack_status.h"

static void on_interrupt(int sig) {
  xpack_remove_temporary_files(); /* async-signal-safe: unlink only */
  raise(sig);                     /* the handler was reset on entry (SA_RESETHAND) */
}

void cli_remove_temporaries_on_interrupt(void) {
  static const int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_interrupt;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; i++) {
    struct sigaction before;
    /* A signal ignored when xpack started (nohup, a background job) stays ignored. */
    if (sigaction(kSignals[i], NULL, &before) == 0 && before.sa_handler != SIG_IGN) sigaction(kSignals[i], &action, NULL);
  }
}
