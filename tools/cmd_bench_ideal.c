/* The "ideal" variant's provider: every packed weight in heap memory, found by pointer identity.
 *
 * It is the floor for creating a runtime with any weights cache: no packing, no file, no identity strings, one
 * hash probe per look-up. It is filled beforehand with the packed bytes (cmd_bench_ideal_fill.c), without
 * creating any XNNPACK runtime first, so the timed creation starts from the state a fresh process has, as the
 * cache variants' does. Keys are the raw pointers XNNPACK passes, which stay valid because the programs stay
 * mapped between filling and measuring. Storage is a list of heap blocks aligned as XNNPACK requires
 * (xpack_xnn_alignment), an offset being a block's index. Single-threaded: the bench creates runtimes without
 * a thread pool. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_bench.h"
#include "xpack_loader.h"

typedef struct ideal_slot {
  uint32_t seed;
  const void* kernel;
  const void* bias;
  size_t size;   /* what XNNPACK reads for the key (bench_ideal_expect) */
  size_t offset; /* SIZE_MAX: empty; IDEAL_UNFILLED: sized, no bytes yet */
} ideal_slot;

#define IDEAL_UNFILLED (SIZE_MAX - 1)

/* A block XNNPACK packs into (scratch) or that holds a weight for good (kept). */
typedef struct ideal_block {
  void* ptr;
  int kept;
} ideal_block;

struct bench_ideal {
  struct xnn_weights_cache_provider provider;
  ideal_block* blocks; /* a kept block's index is its offset */
  size_t block_count, block_capacity;
  ideal_slot* slots;
  size_t capacity, used; /* capacity is a power of two */
  uint64_t lookups, hits, inserts;
  int out_of_memory; /* a size could not be recorded (bench_ideal_expect) */
};

static size_t slot_hash(const struct xnn_weights_cache_look_up_key* key) {
  uint64_t h = (uint64_t)(uintptr_t)key->kernel * 0x9E3779B97F4A7C15ULL;
  h ^= (uint64_t)(uintptr_t)key->bias * 0xC2B2AE3D27D4EB4FULL;
  h ^= key->seed;
  return (size_t)(h ^ (h >> 29));
}

static ideal_slot* probe(bench_ideal* b, const struct xnn_weights_cache_look_up_key* key) {
  for (size_t i = slot_hash(key) & (b->capacity - 1);; i = (i + 1) & (b->capacity - 1)) {
    ideal_slot* s = &b->slots[i];
    if (s->offset == SIZE_MAX) return s;
    if (s->seed == key->seed && s->kernel == key->kernel && s->bias == key->bias) return s;
  }
}

static int grow(bench_ideal* b);

static int insert(bench_ideal* b, const struct xnn_weights_cache_look_up_key* key, size_t size, size_t offset) {
  if ((b->used + 1) * 2 > b->capacity && grow(b) != 0) return -1;
  ideal_slot* s = probe(b, key);
  if (s->offset == IDEAL_UNFILLED) {
    s->offset = offset;
    return 0;
  }
  if (s->offset != SIZE_MAX) return 1;
  *s = (ideal_slot){key->seed, key->kernel, key->bias, size, offset};
  b->used++;
  return 0;
}

static int grow(bench_ideal* b) {
  size_t capacity = b->capacity ? b->capacity * 2 : 1024;
  ideal_slot* old = b->slots;
  size_t old_capacity = b->capacity;
  b->slots = malloc(capacity * sizeof *b->slots);
  if (b->slots == NULL) {
    b->slots = old;
    return -1;
  }
  b->capacity = capacity;
  for (size_t i = 0; i < capacity; i++) b->slots[i].offset = SIZE_MAX;
  for (size_t i = 0; i < old_capacity; i++) {
    if (old[i].offset == SIZE_MAX) continue;
    struct xnn_weights_cache_look_up_key k = {.seed = old[i].seed, .kernel = old[i].kernel, .bias = old[i].bias};
    *probe(b, &k) = old[i];
  }
  free(old);
  return 0;
}

/* The answer to a look-up of key: its filled slot's offset, else SIZE_MAX. */
static size_t ideal_answer(bench_ideal* b, const struct xnn_weights_cache_look_up_key* key) {
  const ideal_slot* s = probe(b, key);
  return s->offset < IDEAL_UNFILLED ? s->offset : SIZE_MAX;
}

static size_t ideal_look_up(void* context, const struct xnn_weights_cache_look_up_key* key) {
  bench_ideal* b = context;
  b->lookups++;
  const size_t offset = ideal_answer(b, key);
  if (offset != SIZE_MAX) b->hits++;
  return offset;
}

void* bench_ideal_reserve(bench_ideal* b, size_t n) {
  if (b->block_count == b->block_capacity) {
    size_t capacity = b->block_capacity ? 2 * b->block_capacity : 256;
    ideal_block* bigger = realloc(b->blocks, capacity * sizeof *bigger);
    if (bigger == NULL) return NULL;
    b->blocks = bigger;
    b->block_capacity = capacity;
  }
  const size_t alignment = xpack_xnn_alignment();
  const size_t rounded = n ? (n + alignment - 1) / alignment * alignment : alignment; /* as the loader's heap */
  void* p = NULL;
  if (rounded < n || posix_memalign(&p, alignment, rounded) != 0) return NULL;
  b->blocks[b->block_count++] = (ideal_block){p, 0};
  return p;
}

/* The index of the scratch block at ptr, or SIZE_MAX. Newest first: XNNPACK hands back the last one. */
static size_t scratch_index(const bench_ideal* b, const void* ptr) {
  for (size_t i = b->block_count; i-- > 0;) {
    if (b->blocks[i].ptr == ptr) return b->blocks[i].kept ? SIZE_MAX : i;
  }
  return SIZE_MAX;
}

size_t bench_ideal_keep(bench_ideal* b, void* block) {
  const size_t i = scratch_index(b, block);
  if (i != SIZE_MAX) b->blocks[i].kept = 1;
  return i;
}

/* Frees a scratch block; the slot stays (empty), so that the offsets of kept blocks do not move. */
static void release(bench_ideal* b, const void* ptr) {
  const size_t i = scratch_index(b, ptr);
  if (i == SIZE_MAX) return;
  free(b->blocks[i].ptr);
  b->blocks[i].ptr = NULL;
}

/* Keeps ptr's block, first copying it into a block of ours when XNNPACK packed elsewhere. */
static size_t keep_bytes(bench_ideal* b, const void* ptr, size_t size) {
  if (scratch_index(b, ptr) == SIZE_MAX) {
    void* copy = bench_ideal_reserve(b, size);
    if (copy == NULL) return SIZE_MAX;
    memcpy(copy, ptr, size);
    ptr = copy;
  }
  return bench_ideal_keep(b, (void*)ptr);
}

static void* ideal_reserve_space(void* context, size_t n) { return bench_ideal_reserve(context, n); }

static size_t ideal_look_up_or_insert(void* context, const struct xnn_weights_cache_look_up_key* key, void* ptr,
                                      size_t size) {
  bench_ideal* b = context;
  if (ptr == NULL) return ideal_answer(b, key); /* 4ea82e5 repeats each answered look-up so: not counted, as the
                                                  loader does not count it */
  ideal_slot* s = probe(b, key);
  if (s->offset < IDEAL_UNFILLED && s->size == size) { /* packed again although we had it (operators that pack
                                                          before asking) */
    release(b, ptr);
    b->lookups++;
    b->hits++;
    return s->offset;
  }
  size_t offset = keep_bytes(b, ptr, size);
  if (offset == SIZE_MAX || insert(b, key, size, offset) < 0) return SIZE_MAX;
  b->inserts++;
  return offset;
}

static bool ideal_is_finalized(void* context) { return true; }

static void* ideal_offset_to_addr(void* context, size_t offset) {
  const bench_ideal* b = context;
  return offset < b->block_count && b->blocks[offset].kept ? b->blocks[offset].ptr : NULL;
}

static enum xnn_status ideal_delete_cache(void* context) { return xnn_status_success; }

bench_ideal* bench_ideal_create(void) {
  bench_ideal* b = calloc(1, sizeof *b);
  if (b == NULL) return NULL;
  if (grow(b) != 0) {
    free(b);
    return NULL;
  }
  b->provider = (struct xnn_weights_cache_provider){
      .context = b,
      .look_up = ideal_look_up,
      .reserve_space = ideal_reserve_space,
      .look_up_or_insert = ideal_look_up_or_insert,
      .is_finalized = ideal_is_finalized,
      .offset_to_addr = ideal_offset_to_addr,
      .delete_cache = ideal_delete_cache,
  };
  return b;
}

struct xnn_weights_cache_provider* bench_ideal_provider(bench_ideal* b) { return &b->provider; }

void bench_ideal_expect(void* context, const struct xnn_weights_cache_look_up_key* key, size_t size) {
  bench_ideal* b = context;
  if (insert(b, key, size, IDEAL_UNFILLED) < 0) b->out_of_memory = 1;
}

int bench_ideal_add(bench_ideal* b, uint32_t seed, const void* kernel, const void* bias, size_t size, size_t offset) {
  const struct xnn_weights_cache_look_up_key key = {.seed = seed, .kernel = kernel, .bias = bias};
  if (b->capacity == 0) return 2;
  ideal_slot* s = probe(b, &key);
  if (s->offset == SIZE_MAX || s->size != size) return 2; /* no size for the key, or another one */
  if (s->offset != IDEAL_UNFILLED) return 1;             /* answered already */
  s->offset = offset;
  return 0;
}

int bench_ideal_expect_failed(const bench_ideal* b) { return b->out_of_memory; }

void bench_ideal_counts(const bench_ideal* b, uint64_t* lookups, uint64_t* hits, uint64_t* inserts) {
  *lookups = b->lookups;
  *hits = b->hits;
  *inserts = b->inserts;
}

void bench_ideal_destroy(bench_ideal* b) {
  if (b == NULL) return;
  for (size_t i = 0; i < b->block_count; i++) free(b->blocks[i].ptr);
  free(b->blocks);
  free(b->slots);
  free(b);
}
