/* xpack bench: is a cache variant slower or faster than its baseline, beyond the run's spread?
 *
 * A ratio of medians says nothing of how sure it is: in a run of 21 fresh processes a program whose first
 * inference varies by 2 ms between processes can show a cache 1.025 x slower that changes 0.1 ms of it. Each
 * repetition runs every variant once, one shortly after the other, so the difference within a repetition
 * leaves out whatever slows the machine for a while; the median of those differences gets an interval from
 * the sign test (order statistics: no assumption on the spread's shape), reported with its exact coverage. */
#include <stdlib.h>

#include "cmd_bench.h"
#include "timing.h"

/* P(X <= k) for X ~ Binomial(n, 1/2). */
static double binomial_half_cdf(size_t n, size_t k) {
  double term = 1.0; /* P(X = 0) = 2^-n */
  for (size_t i = 0; i < n; i++) term *= 0.5;
  double sum = term;
  for (size_t i = 1; i <= k; i++) {
    term = term * (double)(n - i + 1) / (double)i;
    sum += term;
  }
  return sum;
}

int bench_paired_load_ttfi(const bench_run* run, bench_variant variant, bench_variant base, bench_paired* out) {
  const bench_variant_result* a = &run->v[variant];
  const bench_variant_result* b = &run->v[base];
  *out = (bench_paired){0};
  if (!a->enabled || !b->enabled || a->count == 0 || a->count != b->count) return -1;
  const size_t n = a->count;
  double d[BENCH_MAX_REPS];
  for (size_t i = 0; i < n; i++) d[i] = a->samples[i].load_ttfi_ms - b->samples[i].load_ttfi_ms;
  qsort(d, n, sizeof d[0], bench_compare_doubles);
  /* The interval [d(k), d(n+1-k)] (1-based order statistics) misses the median with probability
   * 2 P(X <= k-1): the widest k that keeps that at or under 5 %, else (under 6 pairs) the whole range. */
  size_t k = 1;
  while (k + 1 <= (n + 1) / 2 && 2.0 * binomial_half_cdf(n, k) <= 0.05) k++;
  out->pairs = n;
  out->median_ms = n % 2 ? d[n / 2] : 0.5 * (d[n / 2 - 1] + d[n / 2]);
  out->low_ms = d[k - 1];
  out->high_ms = d[n - k];
  out->coverage = 1.0 - 2.0 * binomial_half_cdf(n, k - 1);
  return 0;
}
