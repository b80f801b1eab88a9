/* State shared by the replay of values (replay_values.c) and nodes (replay_nodes.c). */
#ifndef XPACK_REPLAY_INTERNAL_H
#define XPACK_REPLAY_INTERNAL_H

#include "xpack_replay.h"

typedef struct rp_scratch {
  struct rp_scratch* next;
  _Alignas(16) unsigned char data[];
} rp_scratch;

/* What the replay knows of each defined XNNPACK value (by XNNPACK id): enough to name node families. */
typedef struct rp_value_info {
  enum xnn_datatype datatype;
  const void* data;    /* static data, or NULL */
  uint32_t block_size; /* blockwise-quantized values */
} rp_value_info;

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
  rp_value_info* value_info; /* indexed by XNNPACK id */
  size_t value_info_capacity;
  xpack_replay_weight_family* families;
  size_t family_count, family_capacity;
  rp_scratch* scratch;
} rp_state;

void* rp_scratch_alloc(rp_state* s, size_t bytes);
/* One fp32 blockwise scale as ExecuTorch's XNNPACK backend turns it into bf16 (replay_values.c). */
uint16_t rp_bf16_as_executorch(float f);
enum xnn_datatype rp_datatype(int serialized);
/* Bits per element of a serialized XNNDatatype, as the run buffers are sized. */
size_t rp_element_bits(int serialized);
xpack_status rp_map_id(rp_state* s, uint32_t serialized, uint32_t defined, xpack_error* err);
/* Remembers what XNNPACK value `id` is. Returns XPACK_OK or XPACK_ERR_NOMEM. */
xpack_status rp_note_value(rp_state* s, uint32_t id, enum xnn_datatype datatype, const void* data, uint32_t block_size);
/* Records the family of a weight-packing node defined with XNNPACK ids (bias may be invalid). */
xpack_status rp_note_family(rp_state* s, xpack_family_op op, uint32_t node, uint32_t input, uint32_t filter,
                            uint32_t bias, uint32_t output, uint32_t flags);
/* XNNPACK's id for a serialized id; XNN_INVALID_VALUE_ID stays invalid. Returns 0, or -1 if unknown. */
int rp_lookup_id(rp_state* s, uint32_t serialized, uint32_t* defined);
/* Semantic checks before a value or a convolution node reaches XNNPACK (replay_checks.c): XPACK_ERR_BAD_INPUT
 * naming the value or node and what was expected. */
xpack_status rp_check_value(const rp_state* s, const xpack_et_xnn_value* value, xpack_error* err);
xpack_status rp_check_conv(const rp_state* s, const xpack_et_xnn_node* node, xpack_error* err);
xpack_status rp_define_value(rp_state* s, const xpack_et_xnn_value* value, xpack_error* err);
xpack_status rp_define_node(rp_state* s, const xpack_et_xnn_node* node, xpack_error* err);

#endif
