/* Private side of xpack_et_xnn_graph, shared with constants.c. */
#ifndef XPACK_ET_XNN_GRAPH_INTERNAL_H
#define XPACK_ET_XNN_GRAPH_INTERNAL_H

#include <pthread.h>

#include "et/arena.h"
#include "et/et_internal.h"

/* A packing suffix once computed (packing_suffix.c). */
typedef struct xp_suffix_memo {
  bool known;
  bool ambiguous;
  char suffix[XPACK_ET_PACKING_SUFFIX_SIZE];
} xp_suffix_memo;

typedef struct xp_id_slot {
  uint32_t id;
  uint32_t value_index;
} xp_id_slot;

typedef struct xp_xnn_graph {
  xpack_et_xnn_graph pub; /* first: the public pointer is this struct */
  xp_arena arena;
  xp_id_slot* ids; /* sorted by id */
  const uint8_t** legacy_data;
  size_t* legacy_size;
  /* Uses of weights (weight_uses.c): the indexes of the values with a constant, ordered by the bytes they
   * resolve to; and by value index, the nodes packing it as their filter, in node order (users_start[i] to
   * users_start[i + 1] in users). */
  uint32_t* by_bytes;
  size_t by_bytes_count;
  uint32_t* users_start;
  uint32_t* users;
  /* Packing suffixes, one per class of values sharing bytes, at the position in by_bytes where the class starts:
   * computed at the first call for the class (every value of a class has the same suffix, and computing it costs
   * O(the class's uses): thousands of values sharing one weight cost seconds when each computed it). In the
   * graph's arena, with the uses index; read and written under suffix_lock; forgotten when the uses are indexed
   * again. */
  pthread_mutex_t suffix_lock;
  xp_suffix_memo* suffixes;
} xp_xnn_graph;

static inline const xp_xnn_graph* xp_xnn_graph_impl(const xpack_et_xnn_graph* g) { return (const xp_xnn_graph*)g; }

/* Builds the uses index of a graph whose values are indexed by id, forgetting the suffixes computed before; false
 * when out of memory. */
bool xp_xnn_graph_index_uses(xp_xnn_graph* g);
/* Forgets the packing suffixes computed so far: for tests that change a graph's values or nodes in memory. */
void xp_xnn_graph_forget_suffixes(xp_xnn_graph* g);
/* The values whose constant resolves to constant_idx's bytes (the same index, named key or place in the
 * blob: one pointer for XNNPACK), as value indexes: *count of them from *first (none for index 0). */
void xp_xnn_graph_values_with_bytes(const xpack_et_xnn_graph* graph, uint32_t constant_idx, const uint32_t** first,
                                    size_t* count);
/* The nodes packing value as their filter (fully connected, convolutions, deconvolution), as node indexes in
 * node order. */
void xp_xnn_graph_filter_users(const xpack_et_xnn_graph* graph, const xpack_et_xnn_value* value,
                               const uint32_t** first, size_t* count);

#endif
