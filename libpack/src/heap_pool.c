#include "heap_pool.h"

#include <stdlib.h>
#include <string.h>

void xp_heap_init(xp_heap_pool* pool, size_t alignment) {
  memset(pool, 0, sizeof *pool);
  pthread_mutex_init(&pool->lock, NULL);
  pool->alignment = alignment < sizeof(void*) ? sizeof(void*) : alignment;
}

void xp_heap_destroy(xp_heap_pool* pool) {
  for (size_t i = 0; i < pool->count; i++) free(pool->blocks[i].ptr);
  free(pool->blocks);
  pthread_mutex_destroy(&pool->lock);
  memset(pool, 0, sizeof *pool);
}

void* xp_heap_reserve(xp_heap_pool* pool, size_t n) {
  size_t rounded = (n + pool->alignment - 1) & ~(pool->alignment - 1);
  if (rounded < n || rounded == 0) rounded = pool->alignment;
  void* p = NULL;
  if (posix_memalign(&p, pool->alignment, rounded) != 0) return NULL;
  memset(p, 0, rounded);
  pthread_mutex_lock(&pool->lock);
  if (pool->count == pool->capacity) {
    size_t cap = pool->capacity ? pool->capacity * 2 : 32;
    xp_heap_block* grown = realloc(pool->blocks, cap * sizeof *grown);
    if (grown == NULL) {
      pthread_mutex_unlock(&pool->lock);
      free(p);
      return NULL;
    }
    pool->blocks = grown;
    pool->capacity = cap;
  }
  pool->blocks[pool->count++] = (xp_heap_block){p, n, 0};
  pthread_mutex_unlock(&pool->lock);
  return p;
}

/* Caller holds the lock. Newest first: the block XNNPACK just filled is almost always the last one. */
static ptrdiff_t index_of(const xp_heap_pool* pool, const void* ptr) {
  for (size_t i = pool->count; i-- > 0;) {
    if (pool->blocks[i].ptr == ptr) return (ptrdiff_t)i;
  }
  return -1;
}

int xp_heap_is_scratch(xp_heap_pool* pool, const void* ptr) {
  pthread_mutex_lock(&pool->lock);
  ptrdiff_t i = index_of(pool, ptr);
  int scratch = i >= 0 && !pool->blocks[i].kept;
  pthread_mutex_unlock(&pool->lock);
  return scratch;
}

size_t xp_heap_keep(xp_heap_pool* pool, const void* ptr) {
  pthread_mutex_lock(&pool->lock);
  ptrdiff_t i = index_of(pool, ptr);
  size_t offset = SIZE_MAX;
  if (i >= 0) {
    if (!pool->blocks[i].kept) {
      pool->blocks[i].kept = 1;
      pool->kept_count++;
      pool->kept_bytes += pool->blocks[i].size;
    }
    offset = XP_HEAP_OFFSET_BASE + (size_t)i;
  }
  pthread_mutex_unlock(&pool->lock);
  return offset;
}

void xp_heap_release(xp_heap_pool* pool, const void* ptr) {
  pthread_mutex_lock(&pool->lock);
  ptrdiff_t i = index_of(pool, ptr);
  if (i >= 0 && !pool->blocks[i].kept) {
    free(pool->blocks[i].ptr);
    /* Keep indices of kept blocks stable: the slot stays, empty. */
    pool->blocks[i].ptr = NULL;
    pool->blocks[i].size = 0;
  }
  pthread_mutex_unlock(&pool->lock);
}

void* xp_heap_addr(xp_heap_pool* pool, size_t offset) {
  if (offset < XP_HEAP_OFFSET_BASE) return NULL;
  size_t i = offset - XP_HEAP_OFFSET_BASE;
  pthread_mutex_lock(&pool->lock);
  void* p = (i < pool->count && pool->blocks[i].kept) ? pool->blocks[i].ptr : NULL;
  pthread_mutex_unlock(&pool->lock);
  return p;
}

size_t xp_heap_keep_bytes(xp_heap_pool* pool, const void* ptr, size_t size) {
  if (!xp_heap_is_scratch(pool, ptr)) {
    void* copy = xp_heap_reserve(pool, size);
    if (copy == NULL) return SIZE_MAX;
    memcpy(copy, ptr, size);
    ptr = copy;
  }
  return xp_heap_keep(pool, ptr);
}
