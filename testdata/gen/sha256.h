/* SHA-256 (FIPS 180-4), streaming. Named-data keys are the lower-case hex digest of the stored bytes. */
#ifndef XPACK_GEN_SHA256_H
#define XPACK_GEN_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sha256_ctx {
  uint32_t h[8];
  uint64_t total;
  uint8_t block[64];
  size_t used;
} sha256_ctx;

void sha256_init(sha256_ctx* c);
void sha256_update(sha256_ctx* c, const void* data, size_t n);
void sha256_final(sha256_ctx* c, uint8_t digest[32]);
/* Writes 64 lower-case hex characters and a terminating NUL. */
void sha256_hex(const uint8_t digest[32], char out[65]);

#endif
