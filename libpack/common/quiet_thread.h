/* Threads of xpack's own that never take a process signal. */
#ifndef XPACK_COMMON_QUIET_THREAD_H
#define XPACK_COMMON_QUIET_THREAD_H

#include <pthread.h>
#include <signal.h>

/* The mask of a quiet thread: every signal but the faults a thread raises itself (SIGBUS, SIGSEGV, SIGFPE, SIGILL,
 * SIGTRAP, SIGSYS, SIGABRT). */
void xp_thread_quiet_set(sigset_t* set);

/* pthread_create with every signal but the faults (xp_thread_quiet_set) blocked in the new thread: a signal sent to
 * the process then goes to a thread that has not blocked it, the caller's. The interrupt handler of the CLI relies
 * on that: it runs while the main thread holds signals around naming a temporary file (temp_files.c), and a worker
 * taking the signal in that window once left the file behind. Returns pthread_create's result; the caller's own
 * mask is left as it was. */
int xp_thread_create_quiet(pthread_t* thread, void* (*fn)(void*), void* arg);

#endif
