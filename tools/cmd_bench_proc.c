/* xpack bench: child processes and this process's memory (the page cache: bench/page_cache.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_common.h"
#include "cmd_bench.h"
#include "timing.h"

volatile pid_t g_bench_running_child;

static double now_ms(void) { return bench_now_us() / 1e3; }

int bench_spawn(char* const* argv, bench_child_run* out) {
  memset(out, 0, sizeof *out);
  int fds[2];
  if (pipe(fds) != 0) {
    cli_error("bench: pipe: %s", strerror(errno));
    return -1;
  }
  fflush(NULL);
  /* Held off until the handler can find the child (g_bench_running_child), and restored in the child. */
  sigset_t handled, before;
  sigemptyset(&handled);
  for (int i = 0; i < BENCH_SIGNAL_COUNT; i++) sigaddset(&handled, bench_signals[i]);
  sigprocmask(SIG_BLOCK, &handled, &before);
  const pid_t parent = getpid();
  const double t0 = now_ms();
  pid_t pid = fork();
  if (pid < 0) {
    sigprocmask(SIG_SETMASK, &before, NULL);
    cli_error("bench: fork: %s", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    /* Dies with the bench, however the bench ends: a killed bench's pack child once went on to write a whole
     * cache into its temporary folder, and its variants to print into a closed pipe. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127); /* the bench ended before the line above */
    sigprocmask(SIG_SETMASK, &before, NULL);
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execv("/proc/self/exe", argv);
    fprintf(stderr, "xpack: bench: cannot execute /proc/self/exe: %s\n", strerror(errno));
    _exit(127);
  }
  g_bench_running_child = pid;
  sigprocmask(SIG_SETMASK, &before, NULL);
  close(fds[1]);
  size_t size = 0, capacity = 4096;
  char* buf = malloc(capacity);
  for (;;) {
    if (buf != NULL && size + 1 >= capacity) {
      char* bigger = realloc(buf, capacity * 2);
      if (bigger == NULL) {
        free(buf);
        buf = NULL;
      } else {
        buf = bigger;
        capacity *= 2;
      }
    }
    char sink[4096];
    char* dst = buf ? buf + size : sink;
    size_t room = buf ? capacity - size - 1 : sizeof sink;
    ssize_t n = read(fds[0], dst, room);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (buf) size += (size_t)n;
  }
  close(fds[0]);
  int status = 0;
  while (wait4(pid, &status, 0, &out->usage) < 0) {
    if (errno != EINTR) {
      cli_error("bench: wait4: %s", strerror(errno));
      free(buf);
      return -1;
    }
  }
  g_bench_running_child = 0;
  out->wall_ms = now_ms() - t0;
  out->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  if (buf) buf[size] = 0;
  out->out = buf;
  return 0;
}

/* The value in kB of a "Name:   123 kB" line, in bytes. */
static int kb_field(const char* line, const char* name, uint64_t* out) {
  size_t n = strlen(name);
  if (strncmp(line, name, n) != 0) return 0;
  *out = strtoull(line + n, NULL, 10) * 1024u;
  return 1;
}

void bench_read_memory(uint64_t* rss, uint64_t* private_dirty, uint64_t* peak_rss) {
  *rss = *private_dirty = *peak_rss = 0;
  char line[256];
  FILE* f = fopen("/proc/self/smaps_rollup", "r");
  while (f && fgets(line, sizeof line, f)) {
    if (!kb_field(line, "Rss:", rss)) kb_field(line, "Private_Dirty:", private_dirty);
  }
  if (f) fclose(f);
  f = fopen("/proc/self/status", "r");
  while (f && fgets(line, sizeof line, f)) kb_field(line, "VmHWM:", peak_rss);
  if (f) fclose(f);
}

void bench_read_io(bench_io* out) {
  *out = (bench_io){0};
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) == 0) out->major_faults = (uint64_t)usage.ru_majflt;
  FILE* f = fopen("/proc/self/io", "r");
  if (f == NULL) return;
  char line[128];
  unsigned long long v;
  while (fgets(line, sizeof line, f) != NULL) {
    if (sscanf(line, "syscr: %llu", &v) == 1) out->read_calls = v;
    else if (sscanf(line, "read_bytes: %llu", &v) == 1) out->storage_bytes = v;
  }
  fclose(f);
}
