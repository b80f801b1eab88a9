/* Threads that never take a process signal: see quiet_thread.h. */
#include "common/quiet_thread.h"

#include <signal.h>

int xp_thread_create_quiet(pthread_t* thread, void* (*fn)(void*), void* arg) {
  sigset_t all, before;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &before); /* the new thread inherits this mask */
  const int rc = pthread_create(thread, NULL, fn, arg);
  pthread_sigmask(SIG_SETMASK, &before, NULL);
  return rc;
}
