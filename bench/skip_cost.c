/* xpack-bench-skip: what skipping a small cache costs an app the first time, in a fresh process, against what the
 * skip cannot do without: one stat of the file.
 *
 * usage: xpack-bench-skip CACHE.xpc [--reps N]   (CACHE under 128 KiB: XPACK_OPEN_SKIP_SMALL skips it unread)
 *
 * Each repetition runs every case below in a fresh process of this program (fork + exec, so each one starts with
 * nothing bound, mapped or cached), in a shuffled order, and prints medians over the repetitions:
 *   stat          the first stat(2) of CACHE (the baseline: the skip's one system call)
 *   skip          the first xpack_cache_open(CACHE, XPACK_OPEN_SKIP_SMALL | XPACK_OPEN_SKIP_COLD) + close
 *   stat_bound    the stat after one stat of another file: stat bound and its code paged in, as in most apps
 *   skip_bound    the skip after one stat of another file
 *   code_fault    the first read of a byte of this program's own text, 1 MiB past this code (or halfway to the
 *                 end of the text when that is nearer): what a first call into code
 *                 nobody has run yet costs here (a page fault on a file mapping, the kernel mapping its neighbours)
 * Every case first sets the heap up (blocks kept and freed), as an app's is. Minor faults are counted with getrusage around
 * the timed call. Nothing is asserted: timings only. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "timing.h"
#include "xpack_loader.h"

enum { CASE_STAT, CASE_SKIP, CASE_STAT_BOUND, CASE_SKIP_BOUND, CASE_CODE_FAULT, CASE_COUNT };
static const char* const kCaseNames[CASE_COUNT] = {"stat", "skip", "stat_bound", "skip_bound", "code_fault"};

static long minor_faults(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

/* One case in this (fresh) process: prints "microseconds minor_faults". */
static int run_case(int which, const char* cache_path) {
  struct stat st;
  xpack_cache* cache = NULL;
  xpack_error err;
  (void)bench_now_us(); /* the clock's own first call (its vDSO pages) outside the timed span */
  (void)minor_faults();
  /* An app's heap is in use long before it opens a cache: blocks kept and blocks freed. (A lone malloc and free
   * would give the memory back to the kernel, and the next malloc would fetch fresh pages.) */
  static void* kept[64];
  for (int i = 0; i < 64; i++) kept[i] = malloc(256 + 64 * (size_t)i);
  for (int i = 0; i < 64; i += 2) free(kept[i]);
  if ((which == CASE_STAT_BOUND || which == CASE_SKIP_BOUND) && stat("/", &st) != 0) return 1;
  extern char etext[]; /* the end of the program's text (the linker defines it) */
  uintptr_t far = (uintptr_t)&run_case + (1u << 20);
  if (far >= (uintptr_t)etext) far = (uintptr_t)&run_case + ((uintptr_t)etext - (uintptr_t)&run_case) / 2;
  volatile const unsigned char* text = (const unsigned char*)far;
  const long faults_before = minor_faults();
  const double start = bench_now_us();
  switch (which) {
    case CASE_STAT:
    case CASE_STAT_BOUND:
      if (stat(cache_path, &st) != 0) return 1;
      break;
    case CASE_SKIP:
    case CASE_SKIP_BOUND:
      if (xpack_cache_open(cache_path, XPACK_OPEN_SKIP_SMALL | XPACK_OPEN_SKIP_COLD, &cache, &err) != XPACK_OK) {
        fprintf(stderr, "xpack-bench-skip: %s\n", err.message);
        return 1;
      }
      break;
    case CASE_CODE_FAULT:
      (void)*text;
      break;
  }
  const double elapsed = bench_now_us() - start;
  const long faults = minor_faults() - faults_before;
  if (cache != NULL && xpack_cache_entry_count(cache) != 0) {
    fprintf(stderr, "xpack-bench-skip: %s was opened, not skipped: give a cache under 128 KiB\n", cache_path);
    xpack_cache_close(cache);
    return 1;
  }
  xpack_cache_close(cache);
  printf("%.3f %ld\n", elapsed, faults);
  return 0;
}

/* Runs `self --case which cache` and reads its two numbers. */
static int run_child(const char* self, int which, const char* cache_path, double* us, long* faults) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    char which_text[8];
    snprintf(which_text, sizeof which_text, "%d", which);
    execl(self, self, "--case", which_text, cache_path, (char*)NULL);
    _exit(127);
  }
  close(fds[1]);
  char line[128] = {0};
  size_t used = 0;
  ssize_t n;
  while (used + 1 < sizeof line && (n = read(fds[0], line + used, sizeof line - 1 - used)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    used += (size_t)n;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return sscanf(line, "%lf %ld", us, faults) == 2 ? 0 : -1;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "--case") == 0) return run_case(atoi(argv[2]), argv[3]);
  int reps = 41;
  if (argc == 4 && strcmp(argv[2], "--reps") == 0) reps = atoi(argv[3]);
  if ((argc != 2 && argc != 4) || reps < 1 || reps > 100000) {
    fprintf(stderr, "usage: xpack-bench-skip CACHE.xpc [--reps N]   (a cache under 128 KiB)\n");
    return 2;
  }
  char self[4096];
  const ssize_t self_len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (self_len <= 0) return 3;
  self[self_len] = 0;
  /* us[case][rep], then faults[case][rep]: one block */
  double* table = calloc(2 * CASE_COUNT * (size_t)reps, sizeof *table);
  if (table == NULL) return 3;
  double* us[CASE_COUNT];
  double* faults[CASE_COUNT];
  for (int c = 0; c < CASE_COUNT; c++) {
    us[c] = table + (size_t)c * (size_t)reps;
    faults[c] = table + (size_t)(CASE_COUNT + c) * (size_t)reps;
  }
  srand(17);
  for (int r = 0; r < reps; r++) {
    int order[CASE_COUNT];
    for (int i = 0; i < CASE_COUNT; i++) order[i] = i;
    for (int i = CASE_COUNT - 1; i > 0; i--) {
      const int j = rand() % (i + 1), t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    for (int i = 0; i < CASE_COUNT; i++) {
      long f = 0;
      if (run_child(self, order[i], argv[1], &us[order[i]][r], &f) != 0) {
        fprintf(stderr, "xpack-bench-skip: the %s case failed\n", kCaseNames[order[i]]);
        free(table);
        return 1;
      }
      faults[order[i]][r] = (double)f;
    }
  }
  double medians[CASE_COUNT];
  for (int c = 0; c < CASE_COUNT; c++) medians[c] = bench_median(us[c], reps);
  printf("first call in a fresh process, medians of %d (%s); x base: against the stat of the same row's kind\n", reps,
         argv[1]);
  printf("%-11s %10s %8s %12s\n", "case", "us", "x base", "minor faults");
  for (int c = 0; c < CASE_COUNT; c++) {
    const double base = c == CASE_SKIP_BOUND || c == CASE_STAT_BOUND ? medians[CASE_STAT_BOUND] : medians[CASE_STAT];
    printf("%-11s %10.2f %8.2f %12.1f\n", kCaseNames[c], medians[c], medians[c] / base, bench_median(faults[c], reps));
  }
  free(table);
  return 0;
}
