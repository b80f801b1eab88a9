/* Blockwise fp32 scales become bf16 the way ExecuTorch's XNNPACK backend converts them (scale by
 * 1.00389105f, keep the high half), not by round-to-nearest-even: the replay must hand XNNPACK the
 * scales ExecuTorch hands it, or the packed bytes in a cache differ from what ExecuTorch packs.
 * Expected values were worked out by hand from that formula; the comments say where RNE differs. */
#include <stdint.h>
#include <string.h>

#include "expect.h"
#include "replay/replay_internal.h"

static float from_bits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* One conversion checked with the suite's EXPECT_MSG, naming the input, the result and the expected bits. */
#define EXPECT_BF16(in_bits, out_bits)                                                                     \
  do {                                                                                                     \
    const uint16_t got = xp_replay_bf16_as_executorch(from_bits(in_bits));                                 \
    EXPECT_MSG(got == (out_bits), "0x%08x -> 0x%04x, expected 0x%04x", (unsigned)(in_bits), (unsigned)got, \
               (unsigned)(out_bits));                                                                      \
  } while (0)

int main(void) {
  EXPECT_BF16(0x3F800000u, 0x3F80u); /* 1.0 */
  EXPECT_BF16(0x00000000u, 0x0000u); /* +0 */
  EXPECT_BF16(0x80000000u, 0x8000u); /* -0 */
  EXPECT_BF16(0x3F808000u, 0x3F81u); /* 1 + 2^-8, a tie: up here, to even (0x3F80) by RNE */
  EXPECT_BF16(0xBF808000u, 0xBF81u); /* the same, negative */
  EXPECT_BF16(0x3F818000u, 0x3F82u); /* 1 + 3 * 2^-8, a tie whose even neighbour is also up */
  EXPECT_BF16(0x3F807000u, 0x3F80u); /* below the tie, low in the binade: down, as RNE */
  EXPECT_BF16(0x3FFE7000u, 0x3FFFu); /* below the tie, high in the binade: up here, down (0x3FFE) by RNE */
  EXPECT_BF16(0x7F800000u, 0x7F80u); /* +inf */
  EXPECT_BF16(0x7F7FFFFFu, 0x7F80u); /* FLT_MAX overflows to +inf */
  EXPECT_BF16(0x7FC00000u, 0x7FC0u); /* quiet NaN */
  if (failures == 0) printf("bf16_scales: ok\n");
  return failures != 0;
}
