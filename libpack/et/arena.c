#include "et/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_DEFAULT (64 * 1024)

struct xp_arena_chunk {
  xp_arena_chunk* next;
  size_t used, cap;
  alignas(max_align_t) unsigned char data[];
};

void* xp_arena_alloc(xp_arena* a, size_t size) {
  const size_t align = alignof(max_align_t);
  if (size > SIZE_MAX - align) return NULL;
  size = (size + align - 1) & ~(align - 1);
  if (size == 0) size = align;
  xp_arena_chunk* c = a->head;
  if (!c || c->cap - c->used < size) {
    size_t cap = size > CHUNK_DEFAULT ? size : CHUNK_DEFAULT;
    if (cap > SIZE_MAX - sizeof *c) return NULL;
    c = malloc(sizeof *c + cap);
    if (!c) return NULL;
    c->used = 0;
    c->cap = cap;
    c->next = a->head;
    a->head = c;
  }
  void* p = c->data + c->used;
  c->used += size;
  memset(p, 0, size);
  return p;
}

void* xp_arena_array(xp_arena* a, size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  return xp_arena_alloc(a, n * size);
}

void xp_arena_free(xp_arena* a) {
  xp_arena_chunk* c = a->head;
  while (c) {
    xp_arena_chunk* next = c->next;
    free(c);
    c = next;
  }
  a->head = NULL;
}
