/* The check of the scripted core tests: a failed condition is printed with its place, counted, and the
 * test goes on; main returns failures != 0. */
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

#endif
