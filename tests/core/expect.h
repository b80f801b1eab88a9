/* The one check of every C test: a failed condition is printed to stderr with its place, counted in
 * `failures`, and the test goes on; main returns non-zero when failures != 0.
 *   EXPECT(cond)               prints "file:line: expected cond"
 *   EXPECT_MSG(cond, fmt, ...) adds ": " and the printf-formatted message (fmt alone is fine) */
#ifndef XPACK_TESTS_CORE_EXPECT_H
#define XPACK_TESTS_CORE_EXPECT_H

#include <stdio.h>

static int failures;

#define EXPECT(cond)                                                       \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                          \
    }                                                                      \
  } while (0)

#define EXPECT_MSG(cond, ...)                                                \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: expected %s: ", __FILE__, __LINE__, #cond);   \
      fprintf(stderr, __VA_ARGS__);                                          \
      fprintf(stderr, "\n");                                                 \
      failures++;                                                            \
    }                                                                        \
  } while (0)

#endif
