#include "out_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int out_open(out_file* o, const char* path) {
  memset(o, 0, sizeof *o);
  size_t n = strlen(path);
  o->final_path = malloc(n + 1);
  o->temp_path = malloc(n + 16);
  if (!o->final_path || !o->temp_path) return 0;
  memcpy(o->final_path, path, n + 1);
  snprintf(o->temp_path, n + 16, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(o->temp_path);
  if (fd < 0) {
    fprintf(stderr, "xpack-genmodel: cannot create %s: %s\n", o->temp_path, strerror(errno));
    return 0;
  }
  /* mkstemp creates 0600; give the result the mode a plain fopen would have. */
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  o->f = fdopen(fd, "wb");
  if (!o->f) {
    close(fd);
    unlink(o->temp_path);
    return 0;
  }
  return 1;
}

void out_write(out_file* o, const void* p, size_t n) {
  if (o->failed || n == 0) return;
  if (fwrite(p, 1, n, o->f) != n) o->failed = 1;
  o->written += n;
}

void out_zeros(out_file* o, uint64_t n) {
  static const uint8_t zeros[4096];
  while (n) {
    size_t k = n < sizeof zeros ? (size_t)n : sizeof zeros;
    out_write(o, zeros, k);
    n -= k;
  }
}

void out_pad_to(out_file* o, uint64_t at) {
  if (at > o->written) out_zeros(o, at - o->written);
}

int out_close(out_file* o) {
  if (!o->f) return 0;
  if (fflush(o->f) != 0 || fsync(fileno(o->f)) != 0) o->failed = 1;
  if (fclose(o->f) != 0) o->failed = 1;
  o->f = NULL;
  if (o->failed) fprintf(stderr, "xpack-genmodel: write to %s failed: %s\n", o->temp_path, strerror(errno));
  return !o->failed;
}

int out_commit(out_file* o) {
  int ok = rename(o->temp_path, o->final_path) == 0;
  if (!ok) fprintf(stderr, "xpack-genmodel: cannot rename to %s: %s\n", o->final_path, strerror(errno));
  free(o->temp_path);
  free(o->final_path);
  o->temp_path = o->final_path = NULL;
  return ok;
}

void out_discard(out_file* o) {
  if (o->f) fclose(o->f);
  o->f = NULL;
  if (o->temp_path) unlink(o->temp_path);
  free(o->temp_path);
  free(o->final_path);
  o->temp_path = o->final_path = NULL;
}
