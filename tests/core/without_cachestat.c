/* Runs a command as on a kernel without cachestat(2) (older than 6.5, or one whose seccomp filter refuses it):
 * a seccomp filter makes the call fail with ENOSYS, so that the loader's XPACK_OPEN_SKIP_COLD check takes its
 * other path (a mapping and mincore), the one Android always takes. Exit 77 where no filter can be installed.
 *   without_cachestat COMMAND [ARGS...] */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CACHESTAT_NR 451 /* the same on every Linux architecture */

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: without_cachestat COMMAND [ARGS...]\n");
    return 2;
  }
  struct sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CACHESTAT_NR, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {.len = sizeof code / sizeof code[0], .filter = code};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    printf("skipped: no seccomp filter here (%s)\n", strerror(errno));
    return 77;
  }
  if (syscall(CACHESTAT_NR, -1, NULL, NULL, 0) != -1 || errno != ENOSYS) {
    fprintf(stderr, "without_cachestat: the filter did not take: cachestat still answers\n");
    return 1;
  }
  execvp(argv[1], argv + 1);
  fprintf(stderr, "without_cachestat: cannot run %s: %s\n", argv[1], strerror(errno));
  return 127;
}
