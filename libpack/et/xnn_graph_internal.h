/* Private side of xpack_et_xnn_graph, shared with constants.c. */
#ifndef XPACK_ET_XNN_GRAPH_INTERNAL_H
#define XPACK_ET_XNN_GRAPH_INTERNAL_H

#include "et/arena.h"
#include "et/et_internal.h"

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
} xp_xnn_graph;

static inline const xp_xnn_graph* xp_xnn_graph_impl(const xpack_et_xnn_graph* g) { return (const xp_xnn_graph*)g; }

#endif
