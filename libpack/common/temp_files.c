/* Temporary files that say whether their writer still runs: see temp_files.h. */
#ifdef __linux__
#define _GNU_SOURCE /* sync_file_range */
#endif
#include "common/temp_files.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define XP_TEMP_SUFFIX 6 /* the XXXXXX that mkstemp replaces */
#define XP_TEMP_ATTEMPTS 8

/* Whether `name` is "<prefix>" followed by exactly six letters or digits, as mkstemp makes them. */
static int is_temp_name(const char* name, const char* prefix, size_t prefix_len) {
  if (strncmp(name, prefix, prefix_len) != 0 || strlen(name) != prefix_len + XP_TEMP_SUFFIX) return 0;
  for (const char* p = name + prefix_len; *p; p++) {
    if (!isalnum((unsigned char)*p)) return 0;
  }
  return 1;
}

/* Removes the temporary files of `prefix` in `dir` that no process holds locked, except `own`. The lock is
 * taken before the name is unlinked, and the name must still be the file that was locked: a writer that
 * is creating its file at this moment either finds its name gone (and makes another) or is never touched. */
static void remove_stale(const char* dir, const char* prefix, const char* own) {
  DIR* d = opendir(dir);
  if (d == NULL) return;
  int dfd = dirfd(d);
  size_t prefix_len = strlen(prefix);
  for (struct dirent* e = readdir(d); e != NULL; e = readdir(d)) {
    if (!is_temp_name(e->d_name, prefix, prefix_len) || strcmp(e->d_name, own) == 0) continue;
    int fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat locked, named;
    if (fstat(fd, &locked) == 0 && S_ISREG(locked.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        fstatat(dfd, e->d_name, &named, AT_SYMLINK_NOFOLLOW) == 0 && named.st_dev == locked.st_dev &&
        named.st_ino == locked.st_ino) {
      unlinkat(dfd, e->d_name, 0);
    }
    close(fd);
  }
  closedir(d);
}

/* Whether `path` still names the file open as `fd`. */
static int still_named(const char* path, int fd) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int xp_temp_create(char* path_template) {
  size_t n = strlen(path_template);
  char* pattern = strdup(path_template);
  if (pattern == NULL || n < XP_TEMP_SUFFIX) {
    free(pattern);
    errno = pattern == NULL ? ENOMEM : EINVAL;
    return -1;
  }
  int fd = -1, locked = 0;
  for (int attempt = 0; attempt < XP_TEMP_ATTEMPTS; attempt++) {
    memcpy(path_template, pattern, n + 1);
    fd = mkstemp(path_template);
    if (fd < 0) {
      int e = errno;
      free(pattern);
      errno = e;
      return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK) break; /* no locks on this file system: keep the file, remove nothing */
    } else if (still_named(path_template, fd)) {
      locked = 1;
      break;
    }
    /* Another writer took this file for a leftover between mkstemp and our lock; it removes it. */
    close(fd);
    fd = -1;
  }
  if (fd < 0) {
    free(pattern);
    errno = EEXIST;
    return -1;
  }
  if (locked) {
    char* slash = strrchr(pattern, '/');
    const char* dir = ".";
    char* name = pattern;
    if (slash != NULL) {
      *slash = 0;
      dir = slash == pattern ? "/" : pattern;
      name = slash + 1;
    }
    name[strlen(name) - XP_TEMP_SUFFIX] = 0; /* the prefix ".<target name>." */
    const char* own = strrchr(path_template, '/');
    remove_stale(dir, name, own ? own + 1 : path_template);
  }
  free(pattern);
  return fd;
}

void xp_write_behind(int fd, unsigned long long* started, unsigned long long end) {
  if (end < *started + XP_WRITE_BEHIND_STEP) return;
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
  (void)sync_file_range(fd, (off_t)*started, (off_t)(end - *started), SYNC_FILE_RANGE_WRITE);
#else
  (void)fd;
#endif
  *started = end;
}
