/* The shapes XNNPACK gives the graph's values when it reshapes a runtime, as far as the nodes before tell them.
 *
 * XNNPACK takes the shape of an external input and of a constant from its definition, and the shape of every
 * value a node computes from that node's reshape, whatever the file declares for it. A check whose safety rests
 * on a computed value's size (a deconvolution's input: replay_window_checks.c) must use the size XNNPACK will use: a
 * crafted file declared a transpose's output 26,214 wide while XNNPACK made it 8 wide, the deconvolution's
 * padding passed the check on the declared width, and XNNPACK 4ea82e5 wrote past its indirection buffer
 * (fuzz_replay). Every node ExecuTorch's XNNPACK backend serializes is followed (replay_shape_rules.c); a value is
 * unknown only where XNNPACK's own reshape would fail before using it, or behind such a value; the checks then
 * assume the smallest size (a deconvolution's input) or go by the declared one (a fully-connected layer's input
 * channels). */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "loader/xnn_compat.h"
#include "replay/replay_internal.h"

static int is_static_or_input(const xpack_et_xnn_value* v) {
  return v->constant_buffer_idx != 0 || (v->flags & XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT) != 0;
}

xpack_status xp_replay_shapes_init(xp_replay_state* s, xpack_error* err) {
  const xpack_et_xnn_graph* g = s->graph;
  s->shapes = calloc(g->value_count ? g->value_count : 1, sizeof *s->shapes);
  if (s->shapes == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", g->name);
  for (size_t i = 0; i < g->value_count; i++) {
    const xpack_et_xnn_value* v = &g->values[i];
    if (!is_static_or_input(v) || v->num_dims > XNN_MAX_TENSOR_DIMS) continue;
    s->shapes[i].known = 1;
    s->shapes[i].num_dims = (uint8_t)v->num_dims;
    for (uint32_t d = 0; d < v->num_dims; d++) s->shapes[i].dims[d] = v->dims[d];
  }
  return XPACK_OK;
}

const xp_replay_shape* xp_replay_shape_of(const xp_replay_state* s, uint32_t serialized) {
  if (s->shapes == NULL || serialized == XNN_INVALID_VALUE_ID) return NULL;
  const xpack_et_xnn_value* v = xpack_et_xnn_graph_find_value(s->graph, serialized);
  return v != NULL && s->shapes[v->index].known ? &s->shapes[v->index] : NULL;
}

/* A computed value takes the shape XNNPACK gives it; constants and external inputs keep their own. */
static void set_shape(xp_replay_state* s, uint32_t serialized, int known, const xp_replay_shape* shape) {
  if (serialized == XNN_INVALID_VALUE_ID) return;
  const xpack_et_xnn_value* v = xpack_et_xnn_graph_find_value(s->graph, serialized);
  if (v == NULL || is_static_or_input(v)) return;
  if (!known) {
    s->shapes[v->index].known = 0;
    return;
  }
  s->shapes[v->index] = *shape;
  const uint64_t computed = xp_replay_tensor_bytes(shape->dims, shape->num_dims, v->datatype);
  const uint64_t declared = xp_replay_tensor_bytes(v->dims, v->num_dims, v->datatype);
  if (computed <= declared) return;
  const uint64_t excess = computed - declared;
  s->growth = excess > UINT64_MAX - s->growth ? UINT64_MAX : s->growth + excess;
  if (excess > s->grown_bytes - s->grown_declared_bytes) {
    s->grown_value = v->index;
    s->grown_bytes = computed;
    s->grown_declared_bytes = declared;
  }
}

void xp_replay_shapes_note_node(xp_replay_state* s, const xpack_et_xnn_node* n) {
  if (s->shapes == NULL) return;
  uint32_t output = XNN_INVALID_VALUE_ID;
  xp_replay_shape shape;
  const int known = xp_replay_node_output_shape(s, n, &output, &shape);
  set_shape(s, output, known, &shape);
  if (n->layout == XPACK_ET_XNN_LAYOUT_ARGMAX_POOLING) set_shape(s, n->u.argmax_pooling.output_index_id, known, &shape);
}
