#include "loader/heap_pool.h"

#include <stdlib.h>
#include <string.h>

void xp_heap_init(xp_heap_pool* pool, size_t alignment, size_t offset_base) {
  memset(pool, 0, sizeof *pool);
  pthread_mutex_init(&pool->lock, NULL);
  pool->alignment = alignment < sizeof(void*) ? sizeof(void*) : alignment;
  pool->offset_base = offset_base;
}

void xp_heap_set_spares(xp_heap_pool* pool, size_t limit) {
  pthread_mutex_lock(&pool->lock);
  pool->spare_limit = limit < XP_HEAP_MAX_SPARES ? limit : XP_HEAP_MAX_SPARES;
  while (pool->spare_count > pool->spare_limit) free(pool->spares[--pool->spare_count].ptr);
  pthread_mutex_unlock(&pool->lock);
}

void xp_heap_destroy(xp_heap_pool* pool) {
  for (size_t i = 0; i < pool->count; i++) free(pool->blocks[i].ptr);
  for (size_t i = 0; i < pool->spare_count; i++) free(pool->spares[i].ptr);
  free(pool->blocks);
  pthread_mutex_destroy(&pool->lock);
  memset(pool, 0, sizeof *pool);
}

/* The smallest spare that holds `rounded` bytes, taken out of the spares; or NULL. Caller holds the lock. */
static void* take_spare(xp_heap_pool* pool, size_t rounded, size_t* capacity) {
  size_t best = pool->spare_count;
  for (size_t i = 0; i < pool->spare_count; i++) {
    const size_t c = pool->spares[i].capacity;
    if (c >= rounded && (best == pool->spare_count || c < pool->spares[best].capacity)) best = i;
  }
  if (best == pool->spare_count) return NULL;
  void* p = pool->spares[best].ptr;
  *capacity = pool->spares[best].capacity;
  pool->spares[best] = pool->spares[--pool->spare_count];
  pool->spare_reuses++;
  return p;
}

void* xp_heap_reserve(xp_heap_pool* pool, size_t n) {
  size_t rounded = (n + pool->alignment - 1) & ~(pool->alignment - 1);
  if (rounded < n) return NULL; /* n so near SIZE_MAX that rounding it up wrapped: no block holds it */
  if (rounded == 0) rounded = pool->alignment;
  size_t capacity = rounded;
  pthread_mutex_lock(&pool->lock);
  void* p = take_spare(pool, rounded, &capacity);
  pthread_mutex_unlock(&pool->lock);
  if (p == NULL && posix_memalign(&p, pool->alignment, rounded) != 0) return NULL;
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
  pool->blocks[pool->count++] = (xp_heap_block){p, n, capacity, 0};
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
  if (i >= 0 && (size_t)i < SIZE_MAX - pool->offset_base) {
    if (!pool->blocks[i].kept) {
      pool->blocks[i].kept = 1;
      pool->kept_count++;
      pool->kept_bytes += pool->blocks[i].size;
    }
    offset = pool->offset_base + (size_t)i;
  }
  pthread_mutex_unlock(&pool->lock);
  return offset;
}

void xp_heap_release(xp_heap_pool* pool, const void* ptr) {
  pthread_mutex_lock(&pool->lock);
  ptrdiff_t i = index_of(pool, ptr);
  if (i >= 0 && !pool->blocks[i].kept) {
    xp_heap_block* b = &pool->blocks[i];
    if (pool->spare_count < pool->spare_limit) {
      pool->spares[pool->spare_count++] = (xp_heap_spare){b->ptr, b->capacity};
    } else {
      /* Full: the smallest of the spares and this block is the one freed. */
      size_t smallest = pool->spare_count;
      for (size_t k = 0; k < pool->spare_count; k++) {
        if (pool->spares[k].capacity < b->capacity &&
            (smallest == pool->spare_count || pool->spares[k].capacity < pool->spares[smallest].capacity)) {
          smallest = k;
        }
      }
      if (smallest < pool->spare_count) {
        free(pool->spares[smallest].ptr);
        pool->spares[smallest] = (xp_heap_spare){b->ptr, b->capacity};
      } else {
        free(b->ptr);
      }
    }
    /* Keep indices of kept blocks stable: the slot stays, empty, unless it is the last (XNNPACK packs and
     * releases one block after another, so that the list would otherwise grow by every block ever reserved). */
    b->ptr = NULL;
    b->size = 0;
    b->capacity = 0;
    while (pool->count > 0 && pool->blocks[pool->count - 1].ptr == NULL) pool->count--;
  }
  pthread_mutex_unlock(&pool->lock);
}

void* xp_heap_addr(xp_heap_pool* pool, size_t offset) {
  if (offset < pool->offset_base) return NULL;
  size_t i = offset - pool->offset_base;
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
