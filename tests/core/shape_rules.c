/* The replay's prediction of the shapes XNNPACK's reshape computes (libpack/replay/replay_shape_rules.c) against
 * XNNPACK itself: thousands of random one-node graphs, each defined twice, as xpack's parsed graph and directly
 * in an XNNPACK subgraph whose output is external, so that xnn_get_external_value_shape tells what XNNPACK made
 * of it. The output is declared with every dim 1, so that only XNNPACK's computation can match.
 * Wherever XNNPACK's reshape succeeds, the prediction must be known and equal; where XNNPACK refuses the shapes,
 * nothing is asked of it (no runtime gets that far). XNNPACK must accept at least a quarter of each kind's cases.
 * The deconvolution check (replay_checks.c) rests on these predictions: a wrong one either refuses a good
 * program or lets through a padding that makes XNNPACK 4ea82e5 write past its indirection buffer.
 * Usage: shape_rules [CASES_PER_KIND] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnnpack.h>

#include "et/xnn_graph_internal.h"
#include "expect.h"
#include "loader/xnn_compat.h"
#include "replay/replay_internal.h"

#define MAX_VALUES 6
#define RANK 6

enum role { ROLE_INPUT, ROLE_CONSTANT, ROLE_OUTPUT };

typedef struct one_node {
  xp_xnn_graph graph;
  xpack_et_xnn_value values[MAX_VALUES];
  uint32_t dims[MAX_VALUES][RANK];
  enum role roles[MAX_VALUES];
  xp_id_slot ids[MAX_VALUES];
  xpack_et_xnn_node node;
  uint32_t arrays[3][RANK]; /* the node's perm, new shape, paddings, offsets and sizes */
} one_node;

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint32_t pick(uint32_t lo, uint32_t hi) { /* uniform in [lo, hi] (splitmix64) */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  z ^= z >> 31;
  return lo + (uint32_t)(z % (uint64_t)(hi - lo + 1));
}

static uint32_t add_value(one_node* t, enum role role, uint32_t rank, const uint32_t* dims) {
  const uint32_t i = t->graph.pub.value_count++;
  xpack_et_xnn_value* v = &t->values[i];
  memset(v, 0, sizeof *v);
  v->index = i;
  v->id_out = i;
  v->datatype = XPACK_ET_XNN_DT_FP32;
  v->num_dims = rank;
  v->dims = t->dims[i];
  for (uint32_t d = 0; d < rank; d++) t->dims[i][d] = role == ROLE_OUTPUT ? 1 : dims[d];
  v->flags = role == ROLE_INPUT ? XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT
             : role == ROLE_OUTPUT ? XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_OUTPUT : 0;
  v->constant_buffer_idx = role == ROLE_CONSTANT ? 1 : 0;
  v->external_id = role == ROLE_CONSTANT ? XPACK_ET_XNN_INVALID_ID : i;
  t->roles[i] = role;
  t->ids[i] = (xp_id_slot){i, i};
  return i;
}

static uint32_t add_input(one_node* t, uint32_t rank, const uint32_t* dims) { return add_value(t, ROLE_INPUT, rank, dims); }

static uint32_t add_output(one_node* t, uint32_t rank) { return add_value(t, ROLE_OUTPUT, rank, NULL); }

static void start(one_node* t, int type) {
  memset(t, 0, sizeof *t);
  t->graph.pub.name = "shape_rules";
  t->graph.pub.values = t->values;
  t->graph.pub.nodes = &t->node;
  t->graph.pub.node_count = 1;
  t->graph.ids = t->ids;
  t->node.type = type;
  t->node.type_name = xpack_et_xnn_node_type_name(type);
  t->node.layout = xpack_et_xnn_node_layout(type);
}

static void random_dims(uint32_t rank, uint32_t lo, uint32_t hi, uint32_t* dims) {
  for (uint32_t d = 0; d < rank; d++) dims[d] = pick(lo, hi);
}

static xpack_et_u32_array array_of(one_node* t, int which, uint32_t count) {
  return (xpack_et_u32_array){t->arrays[which], count};
}

/* ------------------------------------------------------------------------------------------------ the cases */

static void conv_case(one_node* t, int type) {
  start(t, type);
  __typeof__(t->node.u.conv)* c = &t->node.u.conv;
  uint32_t in[4] = {pick(1, 2), pick(1, 10), pick(1, 10), pick(1, 4)};
  const int deconv = type == XPACK_ET_XNN_CONV_TRANSPOSE2D, depthwise = type == XPACK_ET_XNN_DEPTHWISE_CONV2D;
  c->kernel_height = pick(1, 4), c->kernel_width = pick(1, 4);
  c->subsampling_height = pick(1, 3), c->subsampling_width = pick(1, 3);
  c->dilation_height = pick(1, 2), c->dilation_width = pick(1, 2);
  if (!deconv && pick(0, 3) == 0) {
    c->flags = XNN_FLAG_TENSORFLOW_SAME_PADDING;
  } else {
    c->padding_top = pick(0, 2), c->padding_bottom = pick(0, 2), c->padding_left = pick(0, 2), c->padding_right = pick(0, 2);
  }
  if (deconv) c->adjustment_height = pick(0, c->subsampling_height - 1), c->adjustment_width = pick(0, c->subsampling_width - 1);
  c->groups = depthwise ? in[3] : 1;
  c->group_input_channels = depthwise ? 1 : in[3];
  c->group_output_channels = depthwise ? pick(1, 2) : pick(1, 3);
  uint32_t filter[4] = {c->groups * c->group_output_channels, c->kernel_height, c->kernel_width, c->group_input_channels};
  if (depthwise) filter[0] = 1, filter[3] = c->groups * c->group_output_channels;
  c->input1_id = add_input(t, 4, in);
  c->filter_id = add_value(t, ROLE_CONSTANT, 4, filter);
  c->bias_id = XPACK_ET_XNN_INVALID_ID;
  c->output_id = add_output(t, 4);
}

/* A pooling window of more than one element (XNNPACK refuses 1x1), with SAME padding or a small explicit one:
 * for the pooling and argmax pooling nodes, whose fields have the same names. */
#define RANDOM_POOLING_WINDOW(p)                                                                   \
  do {                                                                                             \
    do (p)->pooling_height = pick(1, 3), (p)->pooling_width = pick(1, 3);                          \
    while ((p)->pooling_height * (p)->pooling_width == 1);                                         \
    if (pick(0, 3) == 0) {                                                                         \
      (p)->flags = XNN_FLAG_TENSORFLOW_SAME_PADDING;                                               \
    } else {                                                                                       \
      (p)->padding_top = pick(0, 1), (p)->padding_bottom = pick(0, 1);                             \
      (p)->padding_left = pick(0, 1), (p)->padding_right = pick(0, 1);                             \
    }                                                                                              \
  } while (0)

static void pooling_case(one_node* t, int type) {
  start(t, type);
  __typeof__(t->node.u.pooling)* p = &t->node.u.pooling;
  uint32_t in[4] = {1, pick(1, 10), pick(1, 10), pick(1, 3)};
  RANDOM_POOLING_WINDOW(p);
  p->stride_height = pick(1, 3), p->stride_width = pick(1, 3);
  p->dilation_height = p->dilation_width = 1;
  if (type == XPACK_ET_XNN_MAX_POOLING_2D) p->dilation_height = pick(1, 2), p->dilation_width = pick(1, 2);
  p->input_id = add_input(t, 4, in);
  p->output_id = add_output(t, 4);
}

static void argmax_case(one_node* t, int type) {
  start(t, type);
  __typeof__(t->node.u.argmax_pooling)* p = &t->node.u.argmax_pooling;
  uint32_t in[4] = {1, pick(1, 10), pick(1, 10), pick(1, 3)};
  RANDOM_POOLING_WINDOW(p);
  p->input_id = add_input(t, 4, in);
  p->output_value_id = add_output(t, 4);
  p->output_index_id = add_output(t, 4);
}

static void global_average_case(one_node* t, int type) {
  start(t, type);
  uint32_t rank = pick(3, 4), in[4];
  random_dims(rank, 1, 5, in);
  t->node.u.unary.flags = pick(0, 1) ? XNN_FLAG_KEEP_DIMS : 0;
  t->node.u.unary.input_id = add_input(t, rank, in);
  t->node.u.unary.output_id = add_output(t, t->node.u.unary.flags ? rank : rank - 2);
}

static void batch_matrix_multiply_case(one_node* t, int type) {
  start(t, type);
  __typeof__(t->node.u.binary)* b = &t->node.u.binary;
  const uint32_t rank_a = pick(2, 4), rank_b = pick(2, 4), rank = rank_a > rank_b ? rank_a : rank_b;
  uint32_t a[4], w[4], batch[4];
  random_dims(4, 1, 3, batch);
  const uint32_t m = pick(1, 4), k = pick(1, 4), n = pick(1, 4);
  b->flags = pick(0, 1) ? XNN_FLAG_TRANSPOSE_B : 0;
  for (uint32_t d = 0; d + 2 < rank_a; d++) a[d] = pick(0, 3) ? batch[rank - rank_a + d] : 1;
  for (uint32_t d = 0; d + 2 < rank_b; d++) w[d] = pick(0, 3) ? batch[rank - rank_b + d] : 1;
  a[rank_a - 2] = m, a[rank_a - 1] = k;
  w[rank_b - 2] = b->flags ? n : k, w[rank_b - 1] = b->flags ? k : n;
  if (pick(0, 7) == 0) w[rank_b - (b->flags ? 1 : 2)] = k + 1; /* inner dims that disagree: XNNPACK refuses */
  b->input1_id = add_input(t, rank_a, a);
  b->input2_id = add_input(t, rank_b, w);
  b->output_id = add_output(t, rank);
}

static void fully_connected_case(one_node* t, int type) {
  start(t, type);
  __typeof__(t->node.u.fully_connected)* f = &t->node.u.fully_connected;
  const uint32_t rank = pick(1, 4), ic = pick(1, 5), oc = pick(1, 5);
  uint32_t in[4];
  random_dims(rank, 1, 4, in);
  f->flags = pick(0, 1) ? XNN_FLAG_TRANSPOSE_WEIGHTS : 0;
  if (XPACK_XNN_FC_RESHAPE_2D_FLAG && pick(0, 1)) f->flags |= XPACK_XNN_FC_RESHAPE_2D_FLAG;
  in[rank - 1] = ic; /* the replay's check asks this also of a flattened input */
  uint32_t filter[2] = {f->flags & XNN_FLAG_TRANSPOSE_WEIGHTS ? ic : oc, f->flags & XNN_FLAG_TRANSPOSE_WEIGHTS ? oc : ic};
  f->input1_id = add_input(t, rank, in);
  f->filter_id = add_value(t, ROLE_CONSTANT, 2, filter);
  f->bias_id = XPACK_ET_XNN_INVALID_ID;
  f->output_id = add_output(t, (f->flags & XPACK_XNN_FC_RESHAPE_2D_FLAG) ? 2 : rank);
}

static void reshape_case(one_node* t, int type) {
  start(t, type);
  __typeof__(t->node.u.reshape)* r = &t->node.u.reshape;
  const uint32_t rank = pick(1, 4), new_rank = pick(1, 4);
  uint32_t in[4], total = 1;
  random_dims(rank, 1, 4, in);
  for (uint32_t d = 0; d < rank; d++) total *= in[d];
  uint32_t rest = total;
  for (uint32_t d = 0; d < new_rank; d++) { /* divisors of what is left, the last dim takes the rest */
    uint32_t dim = d + 1 == new_rank ? rest : pick(1, 3);
    if (rest % dim != 0) dim = 1;
    t->arrays[0][d] = dim;
    rest /= dim;
  }
  t->arrays[0][pick(0, new_rank - 1)] = 0;                     /* the dim XNNPACK infers */
  if (pick(0, 7) == 0) t->arrays[0][pick(0, new_rank - 1)] = 0; /* perhaps two: XNNPACK refuses */
  if (pick(0, 7) == 0) t->arrays[0][pick(0, new_rank - 1)] += 1; /* perhaps counts that do not divide */
  r->num_dims = new_rank;
  r->new_shape = array_of(t, 0, new_rank);
  r->input_id = add_input(t, rank, in);
  r->output_id = add_output(t, new_rank);
}

static void binary_case(one_node* t, int type) {
  start(t, type);
  __typeof__(t->node.u.binary)* b = &t->node.u.binary;
  const uint32_t rank_a = pick(0, 4), rank_b = pick(0, 4), rank = rank_a > rank_b ? rank_a : rank_b;
  uint32_t shape[4], a[4], w[4];
  random_dims(4, 1, 4, shape);
  for (uint32_t d = 0; d < rank_a; d++) a[d] = pick(0, 2) ? shape[rank - rank_a + d] : 1;
  for (uint32_t d = 0; d < rank_b; d++) w[d] = pick(0, 2) ? shape[rank - rank_b + d] : pick(1, 4);
  b->input1_id = add_input(t, rank_a, a);
  b->input2_id = add_input(t, rank_b, w);
  b->output_id = add_output(t, rank);
}

static void transpose_case(one_node* t, int type) {
  start(t, type);
  const uint32_t rank = pick(1, 5);
  uint32_t in[5];
  random_dims(rank, 1, 5, in);
  for (uint32_t d = 0; d < rank; d++) t->arrays[0][d] = d;
  for (uint32_t d = rank; d > 1; d--) {
    const uint32_t j = pick(0, d - 1), x = t->arrays[0][d - 1];
    t->arrays[0][d - 1] = t->arrays[0][j], t->arrays[0][j] = x;
  }
  t->node.u.transpose.num_dims = rank;
  t->node.u.transpose.perm = array_of(t, 0, rank);
  t->node.u.transpose.input_id = add_input(t, rank, in);
  t->node.u.transpose.output_id = add_output(t, rank);
}

static void pad_case(one_node* t, int type) {
  start(t, type);
  const uint32_t rank = pick(1, 4);
  uint32_t in[4];
  random_dims(rank, 1, 4, in);
  for (uint32_t d = 0; d < XNN_MAX_TENSOR_DIMS; d++) t->arrays[0][d] = d < rank ? pick(0, 2) : 0;
  for (uint32_t d = 0; d < XNN_MAX_TENSOR_DIMS; d++) t->arrays[1][d] = d < rank ? pick(0, 2) : 0;
  t->node.u.constant_pad.pre_paddings = array_of(t, 0, XNN_MAX_TENSOR_DIMS);
  t->node.u.constant_pad.post_paddings = array_of(t, 1, XNN_MAX_TENSOR_DIMS);
  t->node.u.constant_pad.input_id = add_input(t, rank, in);
  t->node.u.constant_pad.output_id = add_output(t, rank);
}

static void concatenate_case(one_node* t, int type) {
  start(t, type);
  __typeof__(t->node.u.concatenate)* c = &t->node.u.concatenate;
  const uint32_t rank = pick(1, 4), count = (uint32_t)(type == XPACK_ET_XNN_CONCATENATE2 ? 2 : 3);
  uint32_t shape[4];
  random_dims(rank, 1, 4, shape);
  c->axis = pick(0, rank - 1);
  uint32_t* ids[3] = {&c->input1_id, &c->input2_id, &c->input3_id};
  for (uint32_t k = 0; k < count; k++) {
    uint32_t in[4];
    memcpy(in, shape, sizeof in);
    in[c->axis] = pick(1, 4);
    *ids[k] = add_input(t, rank, in);
  }
  c->output_id = add_output(t, rank);
}

static void slice_case(one_node* t, int type) {
  start(t, type);
  const uint32_t rank = pick(1, 4);
  uint32_t in[4];
  random_dims(rank, 1, 6, in);
  for (uint32_t d = 0; d < rank; d++) {
    t->arrays[0][d] = pick(0, in[d] - 1);
    t->arrays[1][d] = pick(1, in[d] - t->arrays[0][d]);
  }
  t->node.u.slice.num_dims = rank;
  t->node.u.slice.offsets = array_of(t, 0, rank);
  t->node.u.slice.sizes = array_of(t, 1, rank);
  t->node.u.slice.input_id = add_input(t, rank, in);
  t->node.u.slice.output_id = add_output(t, rank);
}

/* ------------------------------------------------------------------------- the same node, defined in XNNPACK */

static size_t* sizes_of(const xpack_et_u32_array* a, size_t* out) {
  for (uint32_t i = 0; i < a->count; i++) out[i] = a->data[i];
  return out;
}

/* The node's ids are the graph's value indices; XNNPACK numbers its static values after the external ones. */
#define X(id) ((id) == XPACK_ET_XNN_INVALID_ID ? XNN_INVALID_VALUE_ID : xid[id])

static enum xnn_status define_node(xnn_subgraph_t g, const xpack_et_xnn_node* n, const uint32_t* xid) {
  const __typeof__(n->u)* u = &n->u;
  size_t first[XNN_MAX_TENSOR_DIMS] = {0}, second[XNN_MAX_TENSOR_DIMS] = {0};
  switch (n->type) {
    case XPACK_ET_XNN_CONV2D:
      return xnn_define_convolution_2d(g, u->conv.padding_top, u->conv.padding_right, u->conv.padding_bottom,
                                       u->conv.padding_left, u->conv.kernel_height, u->conv.kernel_width,
                                       u->conv.subsampling_height, u->conv.subsampling_width, u->conv.dilation_height,
                                       u->conv.dilation_width, u->conv.groups, u->conv.group_input_channels,
                                       u->conv.group_output_channels, -INFINITY, INFINITY, X(u->conv.input1_id),
                                       X(u->conv.filter_id), XNN_INVALID_VALUE_ID, X(u->conv.output_id), u->conv.flags);
    case XPACK_ET_XNN_DEPTHWISE_CONV2D:
      return xnn_define_depthwise_convolution_2d(
          g, u->conv.padding_top, u->conv.padding_right, u->conv.padding_bottom, u->conv.padding_left,
          u->conv.kernel_height, u->conv.kernel_width, u->conv.subsampling_height, u->conv.subsampling_width,
          u->conv.dilation_height, u->conv.dilation_width, u->conv.group_output_channels, u->conv.groups, -INFINITY,
          INFINITY, X(u->conv.input1_id), X(u->conv.filter_id), XNN_INVALID_VALUE_ID, X(u->conv.output_id), u->conv.flags);
    case XPACK_ET_XNN_CONV_TRANSPOSE2D:
      return xnn_define_deconvolution_2d(g, u->conv.padding_top, u->conv.padding_right, u->conv.padding_bottom,
                                         u->conv.padding_left, u->conv.adjustment_height, u->conv.adjustment_width,
                                         u->conv.kernel_height, u->conv.kernel_width, u->conv.subsampling_height,
                                         u->conv.subsampling_width, u->conv.dilation_height, u->conv.dilation_width,
                                         u->conv.groups, u->conv.group_input_channels, u->conv.group_output_channels,
                                         -INFINITY, INFINITY, X(u->conv.input1_id), X(u->conv.filter_id),
                                         XNN_INVALID_VALUE_ID, X(u->conv.output_id), u->conv.flags);
    case XPACK_ET_XNN_MAX_POOLING_2D:
      return xnn_define_max_pooling_2d(g, u->pooling.padding_top, u->pooling.padding_right, u->pooling.padding_bottom,
                                       u->pooling.padding_left, u->pooling.pooling_height, u->pooling.pooling_width,
                                       u->pooling.stride_height, u->pooling.stride_width, u->pooling.dilation_height,
                                       u->pooling.dilation_width, -INFINITY, INFINITY, X(u->pooling.input_id),
                                       X(u->pooling.output_id), u->pooling.flags);
    case XPACK_ET_XNN_AVG_POOLING_2D:
      return xnn_define_average_pooling_2d(g, u->pooling.padding_top, u->pooling.padding_right,
                                           u->pooling.padding_bottom, u->pooling.padding_left,
                                           u->pooling.pooling_height, u->pooling.pooling_width,
                                           u->pooling.stride_height, u->pooling.stride_width, -INFINITY, INFINITY,
                                           X(u->pooling.input_id), X(u->pooling.output_id), u->pooling.flags);
    case XPACK_ET_XNN_ARGMAX_POOLING_2D:
      return xnn_define_argmax_pooling_2d(g, u->argmax_pooling.padding_top, u->argmax_pooling.padding_right,
                                          u->argmax_pooling.padding_bottom, u->argmax_pooling.padding_left,
                                          u->argmax_pooling.pooling_height, u->argmax_pooling.pooling_width,
                                          X(u->argmax_pooling.input_id), X(u->argmax_pooling.output_value_id),
                                          X(u->argmax_pooling.output_index_id), u->argmax_pooling.flags);
    case XPACK_ET_XNN_GLOBAL_AVG_POOLING_2D:
      return xnn_define_global_average_pooling_2d(g, -INFINITY, INFINITY, X(u->unary.input_id), X(u->unary.output_id),
                                                  u->unary.flags);
    case XPACK_ET_XNN_BATCH_MATRIX_MULTIPLY:
      return xnn_define_batch_matrix_multiply(g, X(u->binary.input1_id), X(u->binary.input2_id), X(u->binary.output_id),
                                              u->binary.flags);
    case XPACK_ET_XNN_ADD:
      return xnn_define_binary(g, xnn_binary_add, NULL, X(u->binary.input1_id), X(u->binary.input2_id), X(u->binary.output_id),
                               0);
    case XPACK_ET_XNN_FULLY_CONNECTED:
      return xnn_define_fully_connected(g, -INFINITY, INFINITY, X(u->fully_connected.input1_id),
                                        X(u->fully_connected.filter_id), XNN_INVALID_VALUE_ID,
                                        X(u->fully_connected.output_id), u->fully_connected.flags);
    case XPACK_ET_XNN_STATIC_RESHAPE:
      return xnn_define_static_reshape(g, u->reshape.num_dims, sizes_of(&u->reshape.new_shape, first),
                                       X(u->reshape.input_id), X(u->reshape.output_id), 0);
    case XPACK_ET_XNN_STATIC_TRANSPOSE:
      return xnn_define_static_transpose(g, u->transpose.num_dims, sizes_of(&u->transpose.perm, first),
                                         X(u->transpose.input_id), X(u->transpose.output_id), 0);
    case XPACK_ET_XNN_STATIC_CONSTANT_PAD:
      return xnn_define_static_constant_pad(g, sizes_of(&u->constant_pad.pre_paddings, first),
                                            sizes_of(&u->constant_pad.post_paddings, second), 0.0f,
                                            X(u->constant_pad.input_id), X(u->constant_pad.output_id), 0);
    case XPACK_ET_XNN_CONCATENATE2:
      return xnn_define_concatenate2(g, (int32_t)u->concatenate.axis, X(u->concatenate.input1_id),
                                     X(u->concatenate.input2_id), X(u->concatenate.output_id), 0);
    case XPACK_ET_XNN_CONCATENATE3:
      return xnn_define_concatenate3(g, (int32_t)u->concatenate.axis, X(u->concatenate.input1_id),
                                     X(u->concatenate.input2_id), X(u->concatenate.input3_id), X(u->concatenate.output_id), 0);
    case XPACK_ET_XNN_STATIC_SLICE:
      return xnn_define_static_slice(g, u->slice.num_dims, sizes_of(&u->slice.offsets, first),
                                     sizes_of(&u->slice.sizes, second), X(u->slice.input_id), X(u->slice.output_id), 0);
    default: return xnn_status_unsupported_parameter;
  }
}

#undef X

static float weights[4096]; /* every constant's data: zeros, large enough for the largest filter here */

/* What XNNPACK's reshape makes of output `out`: 1 and *shape, 0 when it refuses the graph (define or reshape). */
static int xnnpack_shape(const one_node* t, uint32_t out, xp_replay_shape* shape) {
  xnn_subgraph_t g = NULL;
  if (xnn_create_subgraph(MAX_VALUES, 0, &g) != xnn_status_success) return 0;
  int ok = 1;
  uint32_t xid[MAX_VALUES];
  for (uint32_t i = 0; ok && i < t->graph.pub.value_count; i++) {
    const xpack_et_xnn_value* v = &t->values[i];
    size_t dims[RANK];
    for (uint32_t d = 0; d < v->num_dims; d++) dims[d] = v->dims[d];
    const uint32_t flags = t->roles[i] == ROLE_INPUT ? XNN_VALUE_FLAG_EXTERNAL_INPUT
                           : t->roles[i] == ROLE_OUTPUT ? XNN_VALUE_FLAG_EXTERNAL_OUTPUT : 0;
    ok = xnn_define_tensor_value(g, xnn_datatype_fp32, v->num_dims, dims, t->roles[i] == ROLE_CONSTANT ? weights : NULL,
                                 t->roles[i] == ROLE_CONSTANT ? XNN_INVALID_VALUE_ID : i, flags, &xid[i]) ==
         xnn_status_success;
  }
  xnn_runtime_t runtime = NULL;
  ok = ok && define_node(g, &t->node, xid) == xnn_status_success &&
       xnn_create_runtime_v4(g, NULL, NULL, NULL, 0, &runtime) == xnn_status_success &&
       xnn_reshape_runtime(runtime) == xnn_status_success;
  size_t num_dims = 0, dims[XNN_MAX_TENSOR_DIMS];
  ok = ok && xnn_get_external_value_shape(runtime, out, &num_dims, dims) == xnn_status_success;
  if (ok) {
    shape->known = 1;
    shape->num_dims = (uint8_t)num_dims;
    for (size_t d = 0; d < num_dims; d++) shape->dims[d] = (uint32_t)dims[d];
  }
  if (runtime) xnn_delete_runtime(runtime);
  xnn_delete_subgraph(g);
  return ok;
}

static void describe(char* buf, size_t size, const xp_replay_shape* s) {
  size_t at = (size_t)snprintf(buf, size, "[");
  for (uint8_t d = 0; d < s->num_dims && at < size; d++) at += (size_t)snprintf(buf + at, size - at, d ? ", %u" : "%u", s->dims[d]);
  if (at < size) snprintf(buf + at, size - at, "]");
}

/* The replay's own checks of the node: what it refuses never reaches XNNPACK (a deconvolution whose padding
 * leaves too small an output makes XNNPACK 4ea82e5 divide by zero or write past a buffer in reshape; an average
 * pooling's SAME padding below 0 makes it ask for ~100 GB). */
static int replay_accepts(const xp_replay_state* s, const xpack_et_xnn_node* n) {
  xpack_error err;
  if (xp_replay_check_window(s, n, &err) != XPACK_OK) return 0;
  if (n->layout == XPACK_ET_XNN_LAYOUT_CONV) return xp_replay_check_conv(s, n, &err) == XPACK_OK;
  if (n->layout == XPACK_ET_XNN_LAYOUT_FULLY_CONNECTED) return xp_replay_check_fully_connected(s, n, &err) == XPACK_OK;
  return 1;
}

/* One case: returns 1 when XNNPACK's reshape succeeded and the prediction was compared; *refused: the replay's
 * checks refused the node. */
static int compare(const one_node* t, uint32_t case_number, uint32_t* refused) {
  xp_replay_state s;
  memset(&s, 0, sizeof s);
  s.graph = &t->graph.pub;
  xpack_error err;
  if (xp_replay_shapes_init(&s, &err) != XPACK_OK) {
    failures++;
    return 0;
  }
  xp_replay_shapes_note_node(&s, &t->node);
  uint32_t output = XNN_INVALID_VALUE_ID;
  xp_replay_shape predicted, real;
  const int known = xp_replay_node_output_shape(&s, &t->node, &output, &predicted);
  int compared = 0;
  if (!replay_accepts(&s, &t->node)) {
    ++*refused;
  } else if (xnnpack_shape(t, output, &real)) {
    compared = 1;
    char want[96], got[96];
    describe(want, sizeof want, &real);
    describe(got, sizeof got, &predicted);
    EXPECT_MSG(known && predicted.num_dims == real.num_dims &&
                   memcmp(predicted.dims, real.dims, real.num_dims * sizeof real.dims[0]) == 0,
               "%s case %u: XNNPACK computes %s, the replay predicts %s", t->node.type_name, case_number, want,
               known ? got : "nothing");
    const xp_replay_shape* noted = xp_replay_shape_of(&s, output);
    EXPECT_MSG(noted != NULL && noted->num_dims == real.num_dims, "%s case %u: the prediction was not noted",
               t->node.type_name, case_number);
    if (t->node.layout == XPACK_ET_XNN_LAYOUT_ARGMAX_POOLING) {
      const xp_replay_shape* index = xp_replay_shape_of(&s, t->node.u.argmax_pooling.output_index_id);
      EXPECT_MSG(index != NULL && index->num_dims == real.num_dims &&
                     memcmp(index->dims, real.dims, real.num_dims * sizeof real.dims[0]) == 0,
                 "%s case %u: the index output's shape", t->node.type_name, case_number);
    }
  }
  free(s.shapes);
  return compared;
}

/* A 9x9 average pooling, window 2, stride 3, SAME padding: (3 - 1) x 3 + 2 = 8 < 9, a padding of -1. Over 4ea82e5
 * and 1adaa7c7 the replay refuses it, naming the node and the numbers; over the XNNPACKs that saturate it, it is served and
 * its shape agrees. */
static void same_padding_below_zero(void) {
  one_node t;
  start(&t, XPACK_ET_XNN_AVG_POOLING_2D);
  __typeof__(t.node.u.pooling)* p = &t.node.u.pooling;
  const uint32_t in[4] = {1, 9, 9, 2};
  p->pooling_height = p->pooling_width = 2;
  p->stride_height = p->stride_width = 3;
  p->flags = XNN_FLAG_TENSORFLOW_SAME_PADDING;
  p->input_id = add_input(&t, 4, in);
  p->output_id = add_output(&t, 4);
  xp_replay_state s;
  memset(&s, 0, sizeof s);
  s.graph = &t.graph.pub;
  xpack_error err;
  EXPECT(xp_replay_shapes_init(&s, &err) == XPACK_OK);
  const xpack_status st = xp_replay_check_window(&s, &t.node, &err);
#if XPACK_XNN_SAME_PADDING_UNSIGNED
  EXPECT_MSG(st == XPACK_ERR_BAD_INPUT && strstr(err.message, "node 0 (AvgPooling2d): TensorFlow SAME padding over an "
                                                              "input height of 9 with stride 3 and a window of 2 "
                                                              "needs a padding of 8 - 9, below 0") != NULL,
             "SAME padding below 0: %s", st ? err.message : "accepted");
#else
  EXPECT_MSG(st == XPACK_OK, "SAME padding saturated at 0 by this XNNPACK: %s", err.message);
  uint32_t refused = 0;
  EXPECT_MSG(compare(&t, 0, &refused) == 1, "SAME padding saturated at 0: XNNPACK's shape was not compared");
#endif
  free(s.shapes);
}

typedef void (*case_fn)(one_node*, int);
static const struct {
  int type;
  case_fn make;
} kinds[] = {
    {XPACK_ET_XNN_CONV2D, conv_case},
    {XPACK_ET_XNN_DEPTHWISE_CONV2D, conv_case},
    {XPACK_ET_XNN_CONV_TRANSPOSE2D, conv_case},
    {XPACK_ET_XNN_MAX_POOLING_2D, pooling_case},
    {XPACK_ET_XNN_AVG_POOLING_2D, pooling_case},
    {XPACK_ET_XNN_ARGMAX_POOLING_2D, argmax_case},
    {XPACK_ET_XNN_GLOBAL_AVG_POOLING_2D, global_average_case},
    {XPACK_ET_XNN_BATCH_MATRIX_MULTIPLY, batch_matrix_multiply_case},
    {XPACK_ET_XNN_FULLY_CONNECTED, fully_connected_case},
    {XPACK_ET_XNN_STATIC_RESHAPE, reshape_case},
    {XPACK_ET_XNN_ADD, binary_case},
    {XPACK_ET_XNN_STATIC_TRANSPOSE, transpose_case},
    {XPACK_ET_XNN_STATIC_CONSTANT_PAD, pad_case},
    {XPACK_ET_XNN_CONCATENATE2, concatenate_case},
    {XPACK_ET_XNN_CONCATENATE3, concatenate_case},
    {XPACK_ET_XNN_STATIC_SLICE, slice_case},
};

/* The guard of the window checks against XNNPACK's size_t arithmetic, at both widths (a 32-bit target cannot be
 * run here): a deconvolution of stride 65536 over 65537 rows and a 1-tap kernel is past 32 bits, not past 64. */
static void extent_fits(void) {
  EXPECT_MSG(!xp_replay_extent_fits(65536, 65537, 1, UINT32_MAX), "2^32 + 1 fits 32 bits");
  EXPECT_MSG(xp_replay_extent_fits(65536, 65537, 1, UINT64_MAX), "2^32 + 1 does not fit 64 bits");
  EXPECT_MSG(xp_replay_extent_fits(65536, 65536, 65535, UINT32_MAX), "2^32 - 1 does not fit 32 bits");
  EXPECT_MSG(!xp_replay_extent_fits(65536, 65536, 65536, UINT32_MAX), "2^32 fits 32 bits");
  EXPECT_MSG(xp_replay_extent_fits(UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT64_MAX), "(2^32 - 1)^2 does not fit 64 bits");
  EXPECT_MSG(!xp_replay_extent_fits(UINT64_MAX, 3, 0, UINT64_MAX), "a product past 64 bits was computed wrapped");
  EXPECT_MSG(xp_replay_extent_fits(7, 0, UINT32_MAX, UINT32_MAX) && !xp_replay_extent_fits(0, 9, 1, 0),
             "no steps: only the rest counts");
}

int main(int argc, char** argv) {
  const uint32_t cases = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 400;
  extent_fits();
  if (xnn_initialize(NULL) != xnn_status_success) {
    fprintf(stderr, "shape_rules: xnn_initialize failed\n");
    return 2;
  }
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    uint32_t compared = 0, refused = 0;
    for (uint32_t i = 0; i < cases; i++) {
      one_node t;
      kinds[k].make(&t, kinds[k].type);
      compared += (uint32_t)compare(&t, i, &refused);
    }
    printf("%-20s %4u of %u cases compared with XNNPACK's reshape, %u refused by the replay's checks\n",
           xpack_et_xnn_node_type_name(kinds[k].type), compared, cases, refused);
    EXPECT_MSG(compared * 4 >= cases, "%s: too few cases XNNPACK accepted to compare (%u)",
               xpack_et_xnn_node_type_name(kinds[k].type), compared);
  }
  same_padding_below_zero();
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("every computed shape the replay predicts agrees with XNNPACK's reshape\n");
  return 0;
}
