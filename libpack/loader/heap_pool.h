/* Aligned heap blocks handed to XNNPACK by reserve_space, and the weights that end up living in them.
 *
 * A block starts as scratch (XNNPACK packs into it). When the packed weight is then served from a file
 * the scratch is released at once; when it is not (a miss), the block is kept for the life of the pool
 * and becomes a heap fallback, addressed by an offset at or above the pool's offset base, which its owner
 * chooses above every answer of its own so that the two never collide: the file's size for the loader (whose
 * own answers are offsets in the file), WR_HEAP_OFFSET_BASE for the writer (above its region ids). Thread safe.
 *
 * A pool may keep a few released scratch blocks as spares and hand them out again (xp_heap_set_spares): the
 * writer packs weight after weight into scratch that it releases at once, and reusing the blocks keeps its
 * pages faulted in and its heap from growing in holes. The loader keeps none: what it releases goes back. */
#ifndef XPACK_SRC_HEAP_POOL_H
#define XPACK_SRC_HEAP_POOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct xp_heap_block {
  void* ptr;
  size_t size;     /* as asked for */
  size_t capacity; /* as allocated (a spare may be larger than asked for) */
  int kept;
} xp_heap_block;

#define XP_HEAP_MAX_SPARES 8

typedef struct xp_heap_spare {
  void* ptr;
  size_t capacity;
} xp_heap_spare;

typedef struct xp_heap_pool {
  pthread_mutex_t lock;
  xp_heap_block* blocks;
  size_t count, capacity;
  size_t alignment;
  size_t offset_base; /* the offset of block 0 (xp_heap_keep) */
  uint64_t kept_count, kept_bytes;
  xp_heap_spare spares[XP_HEAP_MAX_SPARES];
  size_t spare_count, spare_limit;
  uint64_t spare_reuses; /* reserves answered with a spare */
} xp_heap_pool;

/* offset_base: the offset xp_heap_keep gives the first block; above every other answer of the owner's. */
void xp_heap_init(xp_heap_pool* pool, size_t alignment, size_t offset_base);
void xp_heap_destroy(xp_heap_pool* pool); /* frees every block and spare */
/* Keeps up to `limit` (at most XP_HEAP_MAX_SPARES) released scratch blocks for reuse, the largest ones
 * released; 0, the default, frees them at once. A reserve takes the smallest spare that is large enough. */
void xp_heap_set_spares(xp_heap_pool* pool, size_t limit);
/* A scratch block of n bytes aligned to the pool's alignment, or NULL. Its bytes are not initialised (a
 * spare holds what was packed into it before): XNNPACK, the only caller through reserve_space, fills the
 * whole block with its padding byte before packing (xnn_get_pointer_to_write_weights), so zeroing it here
 * too would write every packed byte one more time. */
void* xp_heap_reserve(xp_heap_pool* pool, size_t n);
/* Whether ptr is the start of a scratch block of this pool that is not yet kept. */
int xp_heap_is_scratch(xp_heap_pool* pool, const void* ptr);
/* Keeps the block starting at ptr and returns its offset (offset base + its index), or SIZE_MAX if ptr is not
 * one of ours or its offset would not fit below SIZE_MAX. */
size_t xp_heap_keep(xp_heap_pool* pool, const void* ptr);
/* Keeps ptr's block, first copying the size bytes into a new block when ptr is not one of our scratch blocks
 * (XNNPACK may hand over memory it did not get from reserve_space). Returns the offset, or SIZE_MAX. */
size_t xp_heap_keep_bytes(xp_heap_pool* pool, const void* ptr, size_t size);
/* Frees a scratch block now, or keeps it as a spare (no-op if ptr is not a scratch block of this pool). */
void xp_heap_release(xp_heap_pool* pool, const void* ptr);
/* The address of a kept block's offset, or NULL. */
void* xp_heap_addr(xp_heap_pool* pool, size_t offset);

#endif
