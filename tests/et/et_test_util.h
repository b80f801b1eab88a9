/* Small helpers shared by the ExecuTorch reader tests. */
#ifndef XPACK_TESTS_ET_UTIL_H
#define XPACK_TESTS_ET_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ET_SKIP 77

#include "../core/expect.h"

/* Exits with the ctest skip code when the real test data folder is absent. */
static inline void et_require_dir(const char* dir) {
  struct stat st;
  if (!dir || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    printf("SKIP: real ExecuTorch test files not found at '%s' (set XPACK_REAL_TESTDATA)\n", dir ? dir : "(unset)");
    exit(ET_SKIP);
  }
}

static inline char* et_path(const char* dir, const char* name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char* p = malloc(n);
  if (!p) abort();
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* Reads a whole file into an exactly-sized heap block (so ASan sees any overread). */
static inline unsigned char* et_read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* b = malloc(n > 0 ? (size_t)n : 1);
  if (b && n > 0 && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *size = n > 0 ? (size_t)n : 0;
  return b;
}

#endif
