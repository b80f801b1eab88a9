/* Where the mappable form puts a region (docs/FORMAT.md section 4): at the first multiple of page_alignment
 * (a region of at least a page) or of the small-region alignment (any other) at or after the end of the
 * previous one. The recording writer places regions by it as they arrive, inflate when it lays a
 * transport file out again, and the ExecuTorch export (with ExecuTorch's own small alignment). Inline: the
 * writer places a region per insert. */
#ifndef XPACK_SRC_REGION_PLACE_H
#define XPACK_SRC_REGION_PLACE_H

#include <stdint.h>

#include "xpc_format.h"

/* x rounded up to a multiple of a, a power of two. */
static inline uint64_t xp_align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }

/* Whether [a, a + b) ends at or before limit, without overflow. */
static inline int xp_fits(uint64_t a, uint64_t b, uint64_t limit) { return a <= limit && b <= limit - a; }

/* The alignment of regions smaller than a page: XNNPACK's allocation alignment, at least 64. */
static inline uint64_t xp_small_region_alignment(uint64_t xnn_alignment) {
  return xnn_alignment > XPC_MIN_REGION_ALIGNMENT ? xnn_alignment : XPC_MIN_REGION_ALIGNMENT;
}

/* The offset of a region of `size` bytes that starts no earlier than `end`. Both alignments are powers of
 * two. */
static inline uint64_t xp_place_region(uint64_t end, uint64_t size, uint64_t page_alignment,
                                       uint64_t small_alignment) {
  return xp_align_up(end, size >= page_alignment ? page_alignment : small_alignment);
}

#endif
