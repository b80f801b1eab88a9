/* State shared by the replay of values (replay_values.c) and nodes (replay_nodes.c). */
#ifndef XPACK_REPLAY_INTERNAL_H
#define XPACK_REPLAY_INTERNAL_H

#include "xpack_replay.h"

typedef struct rp_scratch {
  struct rp_scratch* next;
  _Alignas(16) unsigned char data[];
} rp_scratch;

typedef struct rp_id_pair {
  uint32_t serialized; /* id_out */
  uint32_t defined;    /* XNNPACK's id */
} rp_id_pair;

typedef struct rp_state {
  const xpack_et_xnn_graph* graph;
  const xpack_et_named_sources* sources;
  xpack_bind_fn bind;
  void* bind_context;
  xnn_subgraph_t subgraph;
  rp_id_pair* ids;
  size_t id_count, id_capacity;
  int ids_sorted;
  xpack_replay_external* externals;
  uint32_t num_externals;
  rp_scratch* scratch;
} rp_state;

void* rp_scratch_alloc(rp_state* s, size_t bytes);
enum xnn_datatype rp_datatype(int serialized);
xpack_status rp_map_id(rp_state* s, uint32_t serialized, uint32_t defined, xpack_error* err);
/* XNNPACK's id for a serialized id; XNN_INVALID_VALUE_ID stays invalid. Returns 0, or -1 if unknown. */
int rp_lookup_id(rp_state* s, uint32_t serialized, uint32_t* defined);
xpack_status rp_define_value(rp_state* s, const xpack_et_xnn_value* value, xpack_error* err);
xpack_status rp_define_node(rp_state* s, const xpack_et_xnn_node* node, xpack_error* err);

#endif
