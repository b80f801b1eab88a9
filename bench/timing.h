/* Clock and medians for the bench programs (xpack-bench-open, xpack-bench-skip) and `xpack bench`. libc only. */
#ifndef XPACK_BENCH_TIMING_H
#define XPACK_BENCH_TIMING_H

/* CLOCK_MONOTONIC in microseconds. */
double bench_now_us(void);
/* qsort comparator of two doubles, ascending. */
int bench_compare_doubles(const void* a, const void* b);
/* The median of values[0..count) (the mean of the middle two for an even count); sorts values in place.
 * count > 0. */
double bench_median(double* values, int count);

#endif
