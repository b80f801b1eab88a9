/* Clock and medians for the bench programs (timing.h). */
#include "timing.h"

#include <stdlib.h>
#include <time.h>

double bench_now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int bench_compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

double bench_median(double* values, int count) {
  qsort(values, (size_t)count, sizeof *values, bench_compare_doubles);
  return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}
