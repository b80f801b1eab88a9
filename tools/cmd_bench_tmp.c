/* xpack bench's temporary folder, $TMPDIR/xpack-bench-XXXXXX: the cache it packs to measure (as large as the
 * model's packed weights) and a lock held while the bench runs. A bench ended by a signal it can catch
 * removes the folder (its pack child first); one killed outright (SIGKILL, a CI timeout, the OOM killer)
 * cannot, and once left its cache in $TMPDIR for good. The next bench removes every such folder of this user
 * whose lock nobody holds, and its children die with it (bench_spawn). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_common.h"
#include "cmd_bench.h"

#define BENCH_TMP_PREFIX "xpack-bench-"
#define BENCH_TMP_LOCK "lock"
#define BENCH_TMP_CACHE "bench.xpc"

const int bench_signals[BENCH_SIGNAL_COUNT] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/* The paths of this run, for the signal handler: filled in before it is installed, never changed after. */
static char g_dir[4096], g_cache[4200], g_lock[4200];
static int g_lock_fd = -1;

/* Whether name is one mkdtemp made from BENCH_TMP_PREFIX "XXXXXX". */
static int is_bench_folder(const char* name) {
  const size_t prefix = sizeof BENCH_TMP_PREFIX - 1;
  return strncmp(name, BENCH_TMP_PREFIX, prefix) == 0 && strlen(name) == prefix + 6;
}

/* Removes the folders of killed benches in tmp: this user's, holding a lock file nobody holds. Only the
 * names a bench makes are removed; a folder holding anything else stays (its rmdir fails). A folder without
 * a lock (a bench creating it at this moment, or run with --keep) is left alone. */
static void remove_killed_benches(const char* tmp) {
  DIR* d = opendir(tmp);
  if (d == NULL) return;
  for (struct dirent* e = readdir(d); e != NULL; e = readdir(d)) {
    if (!is_bench_folder(e->d_name)) continue;
    char dir[4096], lock[4200], cache[4200];
    if ((size_t)snprintf(dir, sizeof dir, "%s/%s", tmp, e->d_name) >= sizeof dir) continue;
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) continue;
    snprintf(lock, sizeof lock, "%s/" BENCH_TMP_LOCK, dir);
    snprintf(cache, sizeof cache, "%s/" BENCH_TMP_CACHE, dir);
    const int fd = open(lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      unlink(cache);
      unlink(lock);
      if (rmdir(dir) == 0 && g_verbosity >= 0) cli_line(stderr, "removed %s, left by a bench that was killed", dir);
    }
    close(fd);
  }
  closedir(d);
}

int bench_tmp_create(char* dir, size_t dir_size, char* cache, size_t cache_size, int announce) {
  const char* env = getenv("TMPDIR");
  const char* tmp = env && env[0] ? env : "/tmp";
  remove_killed_benches(tmp);
  snprintf(g_dir, sizeof g_dir, "%s/" BENCH_TMP_PREFIX "XXXXXX", tmp);
  if (mkdtemp(g_dir) == NULL) {
    cli_error("bench: cannot create a temporary directory %s: %s", g_dir, strerror(errno));
    g_dir[0] = 0;
    return -1;
  }
  chmod(g_dir, 0700); /* mkdtemp's 0700 is under the umask: the bench must write and read its own folder */
  snprintf(g_cache, sizeof g_cache, "%s/" BENCH_TMP_CACHE, g_dir);
  snprintf(g_lock, sizeof g_lock, "%s/" BENCH_TMP_LOCK, g_dir);
  /* Locked before it has its name, so that no other bench ever finds it unlocked while this one runs. */
  char fresh[4200];
  snprintf(fresh, sizeof fresh, "%s/.lock-new", g_dir);
  g_lock_fd = open(fresh, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (g_lock_fd < 0 || flock(g_lock_fd, LOCK_EX | LOCK_NB) != 0 || rename(fresh, g_lock) != 0) {
    cli_error("bench: cannot make the lock of %s: %s", g_dir, strerror(errno));
    if (g_lock_fd >= 0) close(g_lock_fd);
    g_lock_fd = -1;
    unlink(fresh);
    rmdir(g_dir);
    g_dir[0] = 0;
    return -1;
  }
  if (announce && g_verbosity >= 0) cli_line(stderr, "packing into %s ...", g_dir);
  snprintf(dir, dir_size, "%s", g_dir);
  snprintf(cache, cache_size, "%s", g_cache);
  return 0;
}

void bench_tmp_remove(int keep_cache) {
  if (g_dir[0] == 0) return;
  unlink(g_lock); /* without its lock, a kept folder is no later bench's to remove */
  if (g_lock_fd >= 0) close(g_lock_fd);
  g_lock_fd = -1;
  if (keep_cache) {
    if (g_verbosity >= 0) cli_line(stderr, "kept %s", g_cache);
  } else {
    unlink(g_cache);
    rmdir(g_dir);
  }
  g_dir[0] = 0;
}

static void remove_on_signal(int sig) {
  /* A pack child signalled alone would otherwise go on and rename its cache into the folder once emptied. */
  const pid_t child = g_bench_running_child;
  if (child > 0 && kill(child, SIGKILL) == 0) waitpid(child, NULL, 0);
  unlink(g_cache); /* async-signal-safe, as are kill, waitpid and rmdir; a missing file is no harm */
  unlink(g_lock);
  rmdir(g_dir);
  raise(sig); /* the handler was reset on entry (SA_RESETHAND): the signal now ends the process as it would have */
}

void bench_tmp_remove_on_signals(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = remove_on_signal;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < BENCH_SIGNAL_COUNT; i++) {
    struct sigaction before;
    /* A signal ignored when bench started (nohup, a background job) stays ignored. */
    if (sigaction(bench_signals[i], NULL, &before) == 0 && before.sa_handler != SIG_IGN) {
      sigaction(bench_signals[i], &action, NULL);
    }
  }
}
