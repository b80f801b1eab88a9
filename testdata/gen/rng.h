/* Deterministic pseudo-random numbers (splitmix64 seeding + xoshiro256**). Only integer arithmetic
 * and exactly-rounded float operations are used, so outputs are identical on every platform. */
#ifndef XPACK_GEN_RNG_H
#define XPACK_GEN_RNG_H

#include <stdint.h>

typedef struct rng {
  uint64_t s[4];
} rng;

static inline uint64_t splitmix64(uint64_t* x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Mixes several identifiers into one seed (e.g. global seed, layer, tensor role). */
static inline uint64_t seed_mix(uint64_t a, uint64_t b) {
  uint64_t x = a ^ (b * 0xd1342543de82ef95ull);
  return splitmix64(&x);
}

static inline void rng_init(rng* r, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

static inline uint64_t rng_next(rng* r) {
  uint64_t* s = r->s;
  uint64_t x = s[1] * 5;
  uint64_t result = ((x << 7) | (x >> 57)) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = (s[3] << 45) | (s[3] >> 19);
  return result;
}

/* Uniform in [0, 1). */
static inline float rng_unit(rng* r) { return (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f); }

/* Roughly standard normal: the sum of four 16-bit uniforms (Irwin-Hall), rescaled to variance 1.
 * One 64-bit draw per value keeps multi-gigabyte generation fast. */
static inline float rng_normal(rng* r) {
  uint64_t x = rng_next(r);
  int32_t sum = (int32_t)(x & 0xffff) + (int32_t)((x >> 16) & 0xffff) + (int32_t)((x >> 32) & 0xffff) +
                (int32_t)(x >> 48);
  /* sum - 2*65535 has variance 4*(65536^2)/12; 1/sqrt of that is 1.7320508/65536 */
  return (float)(sum - 131070) * (1.7320508f / 65536.0f);
}

#endif
