/* The key hash of docs/FORMAT.md 5.9, recomputed here from the prose (one buffer built byte by byte, one
 * XXH3-64 call) and compared with libpack's xp_key_hash for kernel and bias identities of every length
 * around the size where libpack switches from its stack buffer to XXH3's streaming state, with and without
 * a bias, and for seeds with high bits set. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cachefile/cache_view.h"

static void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t spec_key_hash(uint32_t seed, const char* kernel, size_t kernel_len, const char* bias,
                              size_t bias_len) {
  const size_t total = 12 + kernel_len + (bias ? bias_len : 0);
  uint8_t* b = malloc(total);
  if (b == NULL) abort();
  put32(b, seed);
  put32(b + 4, (uint32_t)kernel_len);
  memcpy(b + 8, kernel, kernel_len);
  put32(b + 8 + kernel_len, bias ? (uint32_t)bias_len : 0xFFFFFFFFu);
  if (bias) memcpy(b + 12 + kernel_len, bias, bias_len);
  const uint64_t h = XXH3_64bits(b, total);
  free(b);
  return h;
}

int main(void) {
  char text[2600];
  for (size_t i = 0; i < sizeof text; i++) text[i] = (char)('a' + (i * 7) % 26);
  static const size_t lengths[] = {0, 1, 3, 16, 64, 200, 500, 1000, 1005, 1006, 1011, 1012, 1013, 1020, 1024, 1100, 2500};
  static const uint32_t seeds[] = {0, 1, 0x9e3779b9u, 0xFFFFFFFFu};
  unsigned checked = 0, failures = 0;
  for (size_t s = 0; s < sizeof seeds / sizeof *seeds; s++) {
    for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++) {
      const size_t kl = lengths[k];
      if (xp_key_hash(seeds[s], text, kl, NULL, 0) != spec_key_hash(seeds[s], text, kl, NULL, 0)) {
        fprintf(stderr, "key_hash: seed %#x kernel %zu bytes, no bias: differs from FORMAT.md 5.9\n", seeds[s], kl);
        failures++;
      }
      checked++;
      for (size_t b = 0; b < sizeof lengths / sizeof *lengths; b++) {
        const size_t bl = lengths[b];
        if (xp_key_hash(seeds[s], text, kl, text + 50, bl) != spec_key_hash(seeds[s], text, kl, text + 50, bl)) {
          fprintf(stderr, "key_hash: seed %#x kernel %zu bytes, bias %zu bytes: differs from FORMAT.md 5.9\n",
                  seeds[s], kl, bl);
          failures++;
        }
        checked++;
      }
    }
  }
  /* An empty bias is not the absence of a bias. */
  if (xp_key_hash(7, "k", 1, "", 0) == xp_key_hash(7, "k", 1, NULL, 0)) {
    fprintf(stderr, "key_hash: an empty bias hashes like no bias\n");
    failures++;
  }
  printf("key_hash: %u keys checked against FORMAT.md 5.9, %u differ\n", checked, failures);
  return failures ? 1 : 0;
}
