/* A bump allocator for the many small arrays of a parsed graph: one free releases them all. */
#ifndef XPACK_ET_ARENA_H
#define XPACK_ET_ARENA_H

#include <stddef.h>

typedef struct xp_arena_chunk xp_arena_chunk;
typedef struct xp_arena {
  xp_arena_chunk* head;
} xp_arena;

/* size bytes aligned to max_align_t, zeroed; NULL when out of memory. */
void* xp_arena_alloc(xp_arena* arena, size_t size);
/* n elements of size bytes, with the multiplication checked; NULL on overflow or out of memory. */
void* xp_arena_array(xp_arena* arena, size_t n, size_t size);
void xp_arena_free(xp_arena* arena);

#endif
