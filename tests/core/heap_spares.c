/* The heap pool's spare scratch blocks (heap_pool.h): a released block is handed out again only when the
 * pool keeps spares, and only when large enough; the limit holds; kept blocks are never reused; a pool
 * without spares (the loader's) frees what is released. Kept blocks are numbered from the pool's offset base
 * (the loader's: the cache file's size), and no offset below it names a block; the writer's base is
 * a quarter of size_t's range, whatever its width. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "expect.h"
#include "loader/heap_pool.h"
#include "writer/writer_internal.h"


int main(void) {
  xp_heap_pool pool;
  xp_heap_init(&pool, 64, WR_HEAP_OFFSET_BASE);
  xp_heap_set_spares(&pool, 2);

  uint8_t* a = xp_heap_reserve(&pool, 1000000);
  EXPECT_MSG(a != NULL && ((uintptr_t)a % 64) == 0, "reserve: NULL or misaligned");
  memset(a, 0xAA, 1000000);
  xp_heap_release(&pool, a);
  EXPECT_MSG(pool.spare_count == 1, "a released block did not become a spare");

  uint8_t* b = xp_heap_reserve(&pool, 300000); /* smaller: the spare serves it */
  EXPECT_MSG(b == a, "the spare was not reused for a smaller request");
  EXPECT_MSG(pool.spare_count == 0 && pool.spare_reuses == 1, "spare count or reuse count wrong after reuse");

  uint8_t* c = xp_heap_reserve(&pool, 2000000); /* larger than any spare: a new block */
  EXPECT_MSG(c != NULL && c != a, "a request larger than the spares got a spare");
  memset(c, 0x55, 2000000);
  size_t kept = xp_heap_keep(&pool, c); /* a heap fallback: must never come back as scratch */
  EXPECT_MSG(kept != SIZE_MAX, "keep failed");
  xp_heap_release(&pool, c); /* no-op: kept */
  EXPECT_MSG(xp_heap_addr(&pool, kept) == c && c[0] == 0x55, "a kept block was released or changed");

  uint8_t* d = xp_heap_reserve(&pool, 4096);
  uint8_t* e = xp_heap_reserve(&pool, 8192);
  xp_heap_release(&pool, b);
  xp_heap_release(&pool, d);
  xp_heap_release(&pool, e); /* limit 2: the smallest (d) is freed, b and e stay */
  EXPECT_MSG(pool.spare_count == 2, "the spare limit was not kept");
  int has_b = 0, has_e = 0;
  for (size_t i = 0; i < pool.spare_count; i++) {
    has_b |= pool.spares[i].ptr == b;
    has_e |= pool.spares[i].ptr == e;
  }
  EXPECT_MSG(has_b && has_e, "the largest released blocks were not the ones kept");
  uint8_t* f = xp_heap_reserve(&pool, 5000); /* smallest spare that fits: e (8192), not b (1000000) */
  EXPECT_MSG(f == e, "not the smallest fitting spare");
  xp_heap_destroy(&pool);

  EXPECT_MSG(WR_HEAP_OFFSET_BASE - 1 == SIZE_MAX / 4, "the writer's offset base is not a quarter of size_t's range");

  xp_heap_pool loader;
  const size_t file_size = 9664; /* a cache file's: its offsets are the loader's answers from the file */
  xp_heap_init(&loader, 64, file_size);
  uint8_t* k0 = xp_heap_reserve(&loader, 128);
  uint8_t* k1 = xp_heap_reserve(&loader, 128);
  const size_t kept0 = xp_heap_keep(&loader, k0), kept1 = xp_heap_keep(&loader, k1);
  EXPECT_MSG(kept0 == file_size && kept1 == file_size + 1, "kept blocks not numbered from the offset base");
  EXPECT_MSG(xp_heap_addr(&loader, kept1) == k1 && xp_heap_addr(&loader, file_size - 1) == NULL &&
                 xp_heap_addr(&loader, 0) == NULL,
             "an offset below the base named a block, or a kept one did not");
  uint8_t* g = xp_heap_reserve(&loader, 65536);
  xp_heap_release(&loader, g);
  EXPECT_MSG(loader.spare_count == 0, "a pool without spares kept a released block");
  /* A size that wraps when rounded up to the alignment: no block, rather than a small one recorded as huge. */
  EXPECT_MSG(xp_heap_reserve(&loader, SIZE_MAX - 10) == NULL, "a request near SIZE_MAX got a block");
  uint8_t* empty = xp_heap_reserve(&loader, 0);
  EXPECT_MSG(empty != NULL && ((uintptr_t)empty % 64) == 0, "a request of 0 bytes got no aligned block");
  xp_heap_release(&loader, empty);
  xp_heap_destroy(&loader);

  printf("heap_spares: %d failure(s)\n", failures);
  return failures ? 1 : 0;
}
