/* Named temporary files (the path taken where O_TMPFILE is refused) under writers racing in one folder: a
 * file xp_temp_open hands out must stay its writer's, whatever other writers' clean-up of leftovers does.
 * Each thread opens a temporary file, lets the others run their clean-up for a moment, and checks that its
 * name still names its file. Once a clean-up that took the lock between a writer's create and its lock
 * removed the writer's file: `xpack pack`/`inflate`/`export` into one folder at once then failed with
 * "cannot rename the temporary file into place: No such file or directory". Flock is per open file
 * description, so threads of one process contend as processes would. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/temp_files.h"
#include "expect.h"

/* A count of opens, not a time: on a loaded 2-core machine two seconds once gave fewer than the 1,000 opens the
 * test asked for, and it failed with nothing wrong. */
enum { THREADS = 8, OPENS_PER_THREAD = 500 };

static const char* g_folder;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long g_opened, g_lost, g_open_failed;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int names_fd(const char* path, int fd) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void* writer(void* unused) {
  (void)unused;
  unsigned long opened = 0, lost = 0, open_failed = 0;
  for (int round = 0; round < OPENS_PER_THREAD; round++) {
    char* named = NULL;
    xp_temp_sweep(g_folder); /* as xp_safe_create does before each output's temporary file */
    int fd = xp_temp_open(g_folder, &named);
    if (fd < 0) {
      open_failed++;
      continue;
    }
    opened++;
    for (int i = 0; i < 4; i++) sched_yield(); /* the others clean up meanwhile */
    if (named == NULL || !names_fd(named, fd)) lost++;
    if (named != NULL) unlink(named);
    free(named);
    close(fd);
  }
  pthread_mutex_lock(&g_lock);
  g_opened += opened, g_lost += lost, g_open_failed += open_failed;
  pthread_mutex_unlock(&g_lock);
  return NULL;
}

int main(void) {
  setenv("XPACK_TEST_NAMED_TEMP", "1", 1);
  const char* tmp = getenv("TMPDIR");
  char folder[4096];
  snprintf(folder, sizeof folder, "%s/xpack-temp-race-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  g_folder = mkdtemp(folder);
  if (g_folder == NULL) {
    perror("mkdtemp");
    return 1;
  }
  pthread_t t[THREADS];
  const double start = now_s();
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, writer, NULL);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  printf("temp_race: %lu temporary files opened by %d threads in %.1f s, %lu lost to another's clean-up, %lu opens failed\n",
         g_opened, THREADS, now_s() - start, g_lost, g_open_failed);
  EXPECT_MSG(g_lost == 0, "%lu temporary files were removed (or replaced) while their writer held them", g_lost);
  EXPECT_MSG(g_open_failed == 0, "%lu opens failed", g_open_failed);
  EXPECT_MSG(rmdir(g_folder) == 0, "the folder is not empty afterwards: a temporary file was left behind");
  return failures != 0;
}
