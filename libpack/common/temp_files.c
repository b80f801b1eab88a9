/* Temporary files that leave nothing when their writer is killed: see temp_files.h. */
#ifdef __linux__
#define _GNU_SOURCE /* O_TMPFILE, sync_file_range */
#endif
#include "common/temp_files.h"
#include "xpack_status.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XP_TEMP_PREFIX ".xpack-"
#define XP_TEMP_SUFFIX ".tmp"
#define XP_TEMP_RANDOM 6
#define XP_TEMP_NAME_LEN (sizeof XP_TEMP_PREFIX - 1 + XP_TEMP_RANDOM + sizeof XP_TEMP_SUFFIX - 1)
#define XP_TEMP_ATTEMPTS 64
_Static_assert(1 + XP_TEMP_NAME_LEN == XP_TEMP_NAME_IN_FOLDER, "temp_files.h states the length of \"/\" and a name");

static const char name_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

static int is_name_char(char c) { return c != 0 && strchr(name_chars, c) != NULL; }

int xp_is_temp_name(const char* name) {
  const size_t prefix = sizeof XP_TEMP_PREFIX - 1;
  if (strlen(name) != XP_TEMP_NAME_LEN || strncmp(name, XP_TEMP_PREFIX, prefix) != 0) return 0;
  for (size_t i = 0; i < XP_TEMP_RANDOM; i++) {
    if (!is_name_char(name[prefix + i])) return 0;
  }
  return strcmp(name + prefix + XP_TEMP_RANDOM, XP_TEMP_SUFFIX) == 0;
}

/* "<folder>/.xpack-XXXXXX.tmp" with six fresh characters; NULL when out of memory. */
static char* fresh_name(const char* folder) {
  static atomic_uint_fast64_t counter;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  uint64_t x = (uint64_t)now.tv_nsec ^ ((uint64_t)now.tv_sec << 30) ^ ((uint64_t)getpid() << 40) ^
               (atomic_fetch_add(&counter, 1) * 0x9E3779B97F4A7C15ull);
  x ^= x >> 31; /* splitmix64's finaliser: neighbouring inputs give unrelated names */
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  char random[XP_TEMP_RANDOM + 1];
  for (int i = 0; i < XP_TEMP_RANDOM; i++, x /= sizeof name_chars - 1) {
    random[i] = name_chars[x % (sizeof name_chars - 1)];
  }
  random[XP_TEMP_RANDOM] = 0;
  size_t n = strlen(folder) + XP_TEMP_NAME_LEN + 2;
  char* path = malloc(n);
  if (path != NULL) snprintf(path, n, "%s/%s%s%s", folder, XP_TEMP_PREFIX, random, XP_TEMP_SUFFIX);
  return path;
}

/* The files this process was given to read (xp_temp_spare): never taken for leftovers, whatever their names.
 * Kept for the process's life; past its room, nothing is taken for a leftover at all. */
#define XP_SPARED_MAX 256
static struct {
  pthread_mutex_t lock;
  size_t count;
  int overflowed;
  dev_t dev[XP_SPARED_MAX];
  ino_t ino[XP_SPARED_MAX];
} g_spared = {PTHREAD_MUTEX_INITIALIZER, 0, 0, {0}, {0}};

void xp_temp_spare(dev_t dev, ino_t ino) {
  pthread_mutex_lock(&g_spared.lock);
  size_t i = 0;
  while (i < g_spared.count && !(g_spared.dev[i] == dev && g_spared.ino[i] == ino)) i++;
  if (i == g_spared.count) {
    if (g_spared.count < XP_SPARED_MAX) {
      g_spared.dev[g_spared.count] = dev;
      g_spared.ino[g_spared.count++] = ino;
    } else {
      g_spared.overflowed = 1;
    }
  }
  pthread_mutex_unlock(&g_spared.lock);
}

/* Whether the file may be taken for a leftover: not one this process was given to read. */
static int may_remove(const struct stat* st) {
  pthread_mutex_lock(&g_spared.lock);
  int spared = g_spared.overflowed;
  for (size_t i = 0; !spared && i < g_spared.count; i++) {
    spared = g_spared.dev[i] == st->st_dev && g_spared.ino[i] == st->st_ino;
  }
  pthread_mutex_unlock(&g_spared.lock);
  return !spared;
}

/* Whether folder is shared scratch space: $TMPDIR (or /tmp), or a folder everyone may write into with the sticky
 * bit set (where files are other users' or other tools'): an output written there sweeps nothing, as CLI.md
 * promises (a review found `-o $TMPDIR/x.xpc` sweeping TMPDIR). */
static int is_scratch_folder(int folder_fd) {
  struct stat f, tmp;
  if (fstat(folder_fd, &f) != 0) return 1; /* unknown: leave it alone */
  if ((f.st_mode & S_ISVTX) && (f.st_mode & S_IWOTH)) return 1;
  const char* tmpdir = getenv("TMPDIR");
  if (tmpdir == NULL || tmpdir[0] == '\0') tmpdir = "/tmp";
  return stat(tmpdir, &tmp) == 0 && tmp.st_dev == f.st_dev && tmp.st_ino == f.st_ino;
}

/* The lock is taken before the name is unlinked, and the name must still be the file that was locked: a writer
 * that is creating its file at this moment either finds its name gone (and makes another) or is never touched. */
void xp_temp_sweep(const char* folder) {
  DIR* d = opendir(folder);
  if (d == NULL) return;
  const uid_t user = geteuid();
  int dfd = dirfd(d);
  if (is_scratch_folder(dfd)) { /* judged as opened: the folder swept is the folder judged */
    closedir(d);
    return;
  }
  for (struct dirent* e = readdir(d); e != NULL; e = readdir(d)) {
    if (!xp_is_temp_name(e->d_name)) continue;
    int fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat locked, named;
    if (fstat(fd, &locked) == 0 && S_ISREG(locked.st_mode) && locked.st_uid == user && may_remove(&locked) &&
        flock(fd, LOCK_EX | LOCK_NB) == 0 && fstatat(dfd, e->d_name, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
        named.st_dev == locked.st_dev && named.st_ino == locked.st_ino) {
      unlinkat(dfd, e->d_name, 0);
    }
    close(fd);
  }
  closedir(d);
}

/* Whether `path` still names the file open as `fd`. */
static int still_named(const char* path, int fd) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The temporary files this process has named and not yet renamed or removed, for xpack_remove_temporary_files,
 * which a signal handler calls: fixed slots, no allocation there. A path longer than a slot is not noted (the next
 * writer's sweep removes such a leftover, as before). */
#define XP_NAMED_SLOTS 16
#define XP_NAMED_PATH 4096
enum { SLOT_FREE = 0, SLOT_NAMED = 1, SLOT_REMOVING = 2 }; /* a slot the handler took is never written again */
static char g_named_paths[XP_NAMED_SLOTS][XP_NAMED_PATH];
static atomic_int g_named_state[XP_NAMED_SLOTS];
static pthread_mutex_t g_named_lock = PTHREAD_MUTEX_INITIALIZER;

static void note_named(const char* path) {
  const size_t n = strlen(path);
  if (n >= XP_NAMED_PATH) return;
  pthread_mutex_lock(&g_named_lock);
  for (int i = 0; i < XP_NAMED_SLOTS; i++) {
    if (atomic_load(&g_named_state[i]) != SLOT_FREE) continue;
    memcpy(g_named_paths[i], path, n + 1);
    atomic_store(&g_named_state[i], SLOT_NAMED); /* after the path: a handler never reads a half-written one */
    break;
  }
  pthread_mutex_unlock(&g_named_lock);
}

void xp_temp_forget_name(const char* path) {
  if (path == NULL) return;
  pthread_mutex_lock(&g_named_lock);
  for (int i = 0; i < XP_NAMED_SLOTS; i++) {
    int named = SLOT_NAMED;
    if (atomic_load(&g_named_state[i]) == SLOT_NAMED && strcmp(g_named_paths[i], path) == 0 &&
        atomic_compare_exchange_strong(&g_named_state[i], &named, SLOT_FREE)) {
      break;
    }
  }
  pthread_mutex_unlock(&g_named_lock);
}

void xpack_remove_temporary_files(void) {
  for (int i = 0; i < XP_NAMED_SLOTS; i++) {
    int named = SLOT_NAMED;
    if (atomic_compare_exchange_strong(&g_named_state[i], &named, SLOT_REMOVING)) unlink(g_named_paths[i]);
  }
}

/* From a temporary file's naming to its note the file has a name that an interrupt's handler does not know of: a
 * signal there left it behind (model_crash_safety caught one, sending SIGINT as soon as the file appeared). Caught
 * signals wait for the note, in the calling thread; none is lost. */
static void hold_signals(sigset_t* before) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, before);
}

static void release_signals(const sigset_t* before) { pthread_sigmask(SIG_SETMASK, before, NULL); }

/* The file at path, created exclusively and locked; noted for xpack_remove_temporary_files once it is ours.
 * Returns the descriptor, or -1 (errno EEXIST: try another name). */
static int create_named(const char* path) {
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) { /* no locks here: keep it unlocked */
      note_named(path);
      return fd;
    }
    /* Nobody but another writer's clean-up can hold a file this fresh: it took our file for a leftover
     * between our create and our lock, and removes it (it checks the name after locking), so the name
     * cannot be trusted even while it is still there. */
    close(fd);
    errno = EEXIST;
    return -1;
  }
  if (still_named(path, fd)) {
    note_named(path);
    return fd;
  }
  /* Another writer took this file for a leftover between our open and our lock, and removed it. */
  close(fd);
  errno = EEXIST;
  return -1;
}

/* A named temporary file, created exclusively and locked. Returns the descriptor and *named, or -1. */
static int open_named(const char* folder, char** named) {
  for (int attempt = 0; attempt < XP_TEMP_ATTEMPTS; attempt++) {
    char* path = fresh_name(folder);
    if (path == NULL) {
      errno = ENOMEM;
      return -1;
    }
    sigset_t before;
    hold_signals(&before);
    const int fd = create_named(path);
    const int e = errno;
    release_signals(&before);
    if (fd >= 0) {
      *named = path;
      return fd;
    }
    free(path);
    if (e != EEXIST) {
      errno = e;
      return -1;
    }
  }
  errno = EEXIST;
  return -1;
}

char* xp_folder_of(const char* path) {
  char* copy = strdup(path);
  char* folder = copy ? strdup(dirname(copy)) : NULL;
  free(copy);
  return folder;
}

int xp_temp_open(const char* folder, char** named) {
  *named = NULL;
#if defined(O_TMPFILE)
  /* Linked in later through /proc/self/fd, which a chroot or a container may lack. */
  if (getenv("XPACK_TEST_NAMED_TEMP") == NULL && access("/proc/self/fd", X_OK) == 0) {
    int fd = open(folder, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) {
      flock(fd, LOCK_EX | LOCK_NB); /* nobody else can reach it yet; it keeps the lock once linked */
      return fd;
    }
    /* Refused by the file system (or the kernel): a named file then. Other errors are the folder's. */
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return -1;
  }
#endif
  return open_named(folder, named);
}

int xp_temp_open_unnamed(const char* folder) {
  char* named;
  int fd = xp_temp_open(folder, &named);
  if (fd >= 0 && named != NULL) {
    unlink(named);
    xp_temp_forget_name(named);
  }
  free(named);
  return fd;
}

void xp_fd_path(int fd, char out[XP_FD_PATH_SIZE]) {
#ifdef __linux__
  snprintf(out, XP_FD_PATH_SIZE, "/proc/self/fd/%d", fd);
#else
  snprintf(out, XP_FD_PATH_SIZE, "/dev/fd/%d", fd);
#endif
}

int xp_temp_link(int fd, const char* folder, char** named) {
  *named = NULL;
  char self[XP_FD_PATH_SIZE];
  xp_fd_path(fd, self);
  for (int attempt = 0; attempt < XP_TEMP_ATTEMPTS; attempt++) {
    char* path = fresh_name(folder);
    if (path == NULL) {
      errno = ENOMEM;
      return -1;
    }
    /* Following the /proc link needs no privilege, unlike linkat(fd, "", ..., AT_EMPTY_PATH). */
    sigset_t before;
    hold_signals(&before);
    const int linked = linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
    int e = errno;
    if (linked == 0) note_named(path);
    release_signals(&before);
    if (linked == 0) {
      *named = path;
      return 0;
    }
    free(path);
    if (e != EEXIST) {
      errno = e;
      return -1;
    }
  }
  errno = EEXIST;
  return -1;
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
