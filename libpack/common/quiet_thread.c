/* Threads that never take a process signal: see quiet_thread.h. */
#include "common/quiet_thread.h"

#include <signal.h>

void xp_thread_quiet_set(sigset_t* set) {
  sigfillset(set);
  /* A fault is the faulting thread's own: blocked, Linux still delivers it, but with the default action, past the
   * CLI's SIGBUS handler (a truncated input then killed `pack --jobs 2` instead of naming the file) and past an
   * app's crash reporter. */
  static const int kFaults[] = {SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT};
  for (size_t i = 0; i < sizeof kFaults / sizeof kFaults[0]; i++) sigdelset(set, kFaults[i]);
}

int xp_thread_create_quiet(pthread_t* thread, void* (*fn)(void*), void* arg) {
  sigset_t all, before;
  xp_thread_quiet_set(&all);
  pthread_sigmask(SIG_SETMASK, &all, &before); /* the new thread inherits this mask */
  const int rc = pthread_create(thread, NULL, fn, arg);
  pthread_sigmask(SIG_SETMASK, &before, NULL);
  return rc;
}
