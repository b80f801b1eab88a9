#include "progress.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"

#define PROGRESS_DELAY_MS 1000 /* quick runs show nothing; XPACK_PROGRESS_DELAY_MS overrides (tests) */
#define PROGRESS_TICK_MS 100   /* at most ten redraws a second */

struct progress {
  const char* label;
  const char* unit;
  _Atomic uint64_t total;
  _Atomic uint64_t done;
  _Atomic uint64_t bytes;
  _Atomic int stop;
  int drawn_width; /* characters of the last line drawn; 0 while nothing is on screen */
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
};

static void draw(progress* p) {
  char bytes[32], line[160];
  int n = snprintf(line, sizeof line, "%s: %llu/%llu %s, %s packed", p->label,
                   (unsigned long long)atomic_load(&p->done), (unsigned long long)atomic_load(&p->total), p->unit,
                   cli_bytes(atomic_load(&p->bytes), bytes));
  if (n < 0) return;
  if (n >= (int)sizeof line) n = (int)sizeof line - 1;
  /* Pad over a longer previous line: the count and the byte figure can shrink ("1023.9 MiB" -> "1.0 GiB"). */
  int pad = p->drawn_width > n ? p->drawn_width - n : 0;
  fprintf(stderr, "\r%s%*s", line, pad, "");
  fflush(stderr);
  p->drawn_width = n;
}

static void* progress_thread(void* arg) {
  progress* p = arg;
  const char* delay_env = getenv("XPACK_PROGRESS_DELAY_MS");
  const double delay_ms = delay_env && *delay_env ? atof(delay_env) : PROGRESS_DELAY_MS;
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  pthread_mutex_lock(&p->lock);
  /* No delay: drawn at once, even when the run ends before the first tick (the tests' deterministic case). */
  if (delay_ms <= 0) draw(p);
  while (!atomic_load(&p->stop)) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += PROGRESS_TICK_MS * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&p->wake, &p->lock, &until);
    if (atomic_load(&p->stop)) break;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double elapsed_ms = (now.tv_sec - start.tv_sec) * 1e3 + (now.tv_nsec - start.tv_nsec) / 1e6;
    if (elapsed_ms > delay_ms) draw(p);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

progress* progress_start(const char* label, const char* unit, int enabled) {
  if (!enabled || g_verbosity < 0 || !isatty(STDERR_FILENO)) return NULL;
  progress* p = calloc(1, sizeof *p);
  if (p == NULL) return NULL;
  p->label = label;
  p->unit = unit;
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->wake, NULL);
  /* Started with every signal but the faults blocked, as libpack's threads are (xp_thread_create_quiet, which the
   * tool, using public headers only, cannot call): an interrupt must reach the main thread, whose handler removes the temporary file. */
  sigset_t all, before;
  sigfillset(&all);
  static const int kFaults[] = {SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT}; /* the thread's own */
  for (size_t i = 0; i < sizeof kFaults / sizeof kFaults[0]; i++) sigdelset(&all, kFaults[i]);
  pthread_sigmask(SIG_SETMASK, &all, &before);
  const int started = pthread_create(&p->thread, NULL, progress_thread, p);
  pthread_sigmask(SIG_SETMASK, &before, NULL);
  if (started != 0) {
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
    return NULL; /* no progress line is no reason to fail a pack */
  }
  return p;
}

void progress_set_total(progress* p, uint64_t total) {
  if (p) atomic_store(&p->total, total);
}

void progress_item_done(progress* p, uint64_t bytes_so_far) {
  if (p == NULL) return;
  atomic_fetch_add(&p->done, 1);
  atomic_store(&p->bytes, bytes_so_far);
}

void progress_finish(progress* p) {
  if (p == NULL) return;
  pthread_mutex_lock(&p->lock);
  atomic_store(&p->stop, 1);
  pthread_cond_signal(&p->wake);
  pthread_mutex_unlock(&p->lock);
  pthread_join(p->thread, NULL);
  if (p->drawn_width > 0) {
    fprintf(stderr, "\r%*s\r", p->drawn_width, "");
    fflush(stderr);
  }
  pthread_cond_destroy(&p->wake);
  pthread_mutex_destroy(&p->lock);
  free(p);
}
