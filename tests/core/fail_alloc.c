/* Preloaded (LD_PRELOAD) into a process, makes its XPACK_FAIL_ALLOC-th allocation fail, counting malloc, calloc,
 * realloc, posix_memalign and aligned_alloc calls from the first one on (out_of_memory.sh tries every one in
 * turn). With XPACK_FAIL_ALLOC unset nothing fails, and with XPACK_COUNT_ALLOCS set the count is written to stderr at
 * exit. The dynamic linker's own allocations, made before the real functions are found, come from a static
 * buffer. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Atomic long count;
static long fail_at = -1;
static int ready; /* 0: not looked up yet, -1: looking up, 1: ready */
static void* (*real_malloc)(size_t);
static void* (*real_calloc)(size_t, size_t);
static void* (*real_realloc)(void*, size_t);
static void (*real_free)(void*);
static int (*real_posix_memalign)(void**, size_t, size_t);
static void* (*real_aligned_alloc)(size_t, size_t);
static _Alignas(16) char early[1 << 16];
static size_t early_used;

static void look_up(void) {
  ready = -1;
  real_malloc = dlsym(RTLD_NEXT, "malloc");
  real_calloc = dlsym(RTLD_NEXT, "calloc");
  real_realloc = dlsym(RTLD_NEXT, "realloc");
  real_free = dlsym(RTLD_NEXT, "free");
  real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
  real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
  const char* at = getenv("XPACK_FAIL_ALLOC");
  if (at != NULL) fail_at = atol(at);
  ready = 1;
}

static void* early_alloc(size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (early_used + n > sizeof early) return NULL;
  void* p = early + early_used;
  early_used += n;
  return p;
}

static int is_early(const void* p) { return (const char*)p >= early && (const char*)p < early + sizeof early; }

/* Whether this allocation is the one that fails. */
static int fails(void) { return ++count == fail_at; }

void* malloc(size_t n) {
  if (ready == 0) look_up();
  if (ready < 0) return early_alloc(n);
  if (fails()) {
    errno = ENOMEM;
    return NULL;
  }
  return real_malloc(n);
}

void* calloc(size_t a, size_t b) {
  if (ready == 0) look_up();
  if (ready < 0) return b != 0 && a > SIZE_MAX / b ? NULL : early_alloc(a * b); /* static: zeroed */
  if (fails()) {
    errno = ENOMEM;
    return NULL;
  }
  return real_calloc(a, b);
}

void* realloc(void* p, size_t n) {
  if (ready == 0) look_up();
  if (ready < 0 || is_early(p)) { /* out of the static buffer: its blocks' sizes are not kept, so copy what may be */
    void* q = ready < 0 ? early_alloc(n) : real_malloc(n);
    if (q != NULL && p != NULL) {
      const size_t left = (size_t)(early + sizeof early - (const char*)p);
      memmove(q, p, n < left ? n : left);
    }
    return q;
  }
  if (fails()) {
    errno = ENOMEM;
    return NULL;
  }
  return real_realloc(p, n);
}

void free(void* p) {
  if (p == NULL || is_early(p)) return;
  if (ready == 0) look_up();
  real_free(p);
}

int posix_memalign(void** out, size_t alignment, size_t n) {
  if (ready == 0) look_up();
  if (fails()) return ENOMEM;
  return real_posix_memalign(out, alignment, n);
}

void* aligned_alloc(size_t alignment, size_t n) {
  if (ready == 0) look_up();
  if (fails()) {
    errno = ENOMEM;
    return NULL;
  }
  return real_aligned_alloc(alignment, n);
}

__attribute__((destructor)) static void report(void) {
  if (getenv("XPACK_COUNT_ALLOCS") == NULL) return;
  char line[64];
  int n = snprintf(line, sizeof line, "allocations: %ld\n", (long)count);
  if (n > 0) (void)!write(2, line, (size_t)n);
}
