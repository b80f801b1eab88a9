/* The shapes XNNPACK gives the graph's values when it reshapes a runtime, as far as the nodes before tell them.
 *
 * XNNPACK takes the shape of an external input and of a constant from its definition, and the shape of every
 * value a node computes from that node's reshape, whatever the file declares for it. A check whose safety rests
 * on a computed value's size (a deconvolution's input: replay_checks.c) must use the size XNNPACK will use: a
 * crafted file declared a transpose's output 26,214 wide while XNNPACK made it 8 wide, the deconvolution's
 * padding passed the check on the declared width, and XNNPACK 4ea82e5 wrote past its indirection buffer
 * (fuzz_replay). Shapes are followed through the nodes a decoder puts before a deconvolution and through
 * fully-connected layers; any other node leaves its output unknown, and the checks then assume the smallest size
 * (a deconvolution's input) or go by the declared one (a fully-connected layer's input channels). */
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

/* XNNPACK's output size of a convolution or pooling window over `in` (padding already added). */
static uint64_t window_output(uint64_t padded, uint64_t kernel, uint64_t dilation, uint64_t stride) {
  const uint64_t effective = kernel ? (kernel - 1) * (dilation ? dilation : 1) + 1 : 0;
  return (padded > effective ? padded - effective : 0) / stride + 1;
}

uint64_t xp_replay_deconv_output(uint64_t in, uint64_t padding, uint64_t adjustment, uint64_t kernel, uint64_t dilation,
                                 uint64_t stride) {
  const uint64_t full = stride * (in ? in - 1 : 0) + adjustment + (kernel ? (kernel - 1) * dilation + 1 : 0);
  return full > padding ? full - padding : 0;
}

/* NHWC output of a 2-D window node, channels `channels` (0: the input's). Returns 0 when unknown. */
static int spatial(const xp_replay_shape* in, xp_replay_shape* out, int deconv, uint64_t pt, uint64_t pb, uint64_t pl,
                   uint64_t pr, uint64_t kh, uint64_t kw, uint64_t sh, uint64_t sw, uint64_t dh, uint64_t dw,
                   uint64_t ah, uint64_t aw, uint64_t channels) {
  if (in->num_dims != 4 || sh == 0 || sw == 0) return 0;
  const uint64_t h = deconv ? xp_replay_deconv_output(in->dims[1], pt + pb, ah, kh, dh, sh)
                            : window_output(in->dims[1] + pt + pb, kh, dh, sh);
  const uint64_t w = deconv ? xp_replay_deconv_output(in->dims[2], pl + pr, aw, kw, dw, sw)
                            : window_output(in->dims[2] + pl + pr, kw, dw, sw);
  if (h > UINT32_MAX || w > UINT32_MAX || channels > UINT32_MAX) return 0;
  *out = *in;
  out->dims[1] = (uint32_t)h;
  out->dims[2] = (uint32_t)w;
  if (channels) out->dims[3] = (uint32_t)channels;
  return 1;
}

/* Numpy-style broadcasting of two shapes, as XNNPACK's binary elementwise nodes do. */
static int broadcast(const xp_replay_shape* a, const xp_replay_shape* b, xp_replay_shape* out) {
  const uint8_t rank = a->num_dims > b->num_dims ? a->num_dims : b->num_dims;
  out->known = 1;
  out->num_dims = rank;
  for (uint8_t i = 0; i < rank; i++) {
    const uint32_t x = i < rank - a->num_dims ? 1 : a->dims[i - (rank - a->num_dims)];
    const uint32_t y = i < rank - b->num_dims ? 1 : b->dims[i - (rank - b->num_dims)];
    if (x != y && x != 1 && y != 1) return 0;
    out->dims[i] = x == 1 ? y : x;
  }
  return 1;
}

static int shape_preserving(int type) {
  switch (type) {
    case XPACK_ET_XNN_SOFTMAX: case XPACK_ET_XNN_SIGMOID: case XPACK_ET_XNN_CLAMP: case XPACK_ET_XNN_FLOOR:
    case XPACK_ET_XNN_CONVERT: case XPACK_ET_XNN_SQUARE_ROOT: case XPACK_ET_XNN_CEILING: case XPACK_ET_XNN_HARDSWISH:
    case XPACK_ET_XNN_LEAKY_RELU: case XPACK_ET_XNN_NEGATE: case XPACK_ET_XNN_SQUARE: case XPACK_ET_XNN_ELU:
    case XPACK_ET_XNN_ABS: case XPACK_ET_XNN_RECIPROCAL_SQUARE_ROOT: case XPACK_ET_XNN_LOG: case XPACK_ET_XNN_GELU:
    case XPACK_ET_XNN_TANH: case XPACK_ET_XNN_EXP: case XPACK_ET_XNN_SIN: case XPACK_ET_XNN_COPY: case XPACK_ET_XNN_COS:
      return 1;
    default: return 0;
  }
}

static int is_binary_elementwise(int type) {
  return type == XPACK_ET_XNN_ADD || type == XPACK_ET_XNN_SUBTRACT || type == XPACK_ET_XNN_MULTIPLY ||
         type == XPACK_ET_XNN_DIV || type == XPACK_ET_XNN_MINIMUM || type == XPACK_ET_XNN_MAXIMUM;
}

/* The output of n and its shape; returns 0 when the replay does not follow this node. */
static int output_shape(const xp_replay_state* s, const xpack_et_xnn_node* n, uint32_t* output, xp_replay_shape* out) {
  const __typeof__(n->u)* u = &n->u;
  memset(out, 0, sizeof *out);
  out->known = 1;
  if (n->layout == XPACK_ET_XNN_LAYOUT_UNARY || n->layout == XPACK_ET_XNN_LAYOUT_ELU ||
      n->layout == XPACK_ET_XNN_LAYOUT_LEAKY_RELU) {
    const uint32_t in_id = n->layout == XPACK_ET_XNN_LAYOUT_ELU          ? u->elu.input_id
                           : n->layout == XPACK_ET_XNN_LAYOUT_LEAKY_RELU ? u->leaky_relu.input_id
                                                                         : u->unary.input_id;
    *output = n->layout == XPACK_ET_XNN_LAYOUT_ELU          ? u->elu.output_id
              : n->layout == XPACK_ET_XNN_LAYOUT_LEAKY_RELU ? u->leaky_relu.output_id
                                                            : u->unary.output_id;
    const xp_replay_shape* in = xp_replay_shape_of(s, in_id);
    if (!shape_preserving(n->type) || in == NULL) return 0;
    *out = *in;
    return 1;
  }
  if (n->layout == XPACK_ET_XNN_LAYOUT_BINARY) {
    *output = u->binary.output_id;
    const xp_replay_shape *a = xp_replay_shape_of(s, u->binary.input1_id), *b = xp_replay_shape_of(s, u->binary.input2_id);
    if (n->type == XPACK_ET_XNN_PRELU && a != NULL) {
      *out = *a;
      return 1;
    }
    return is_binary_elementwise(n->type) && a != NULL && b != NULL && broadcast(a, b, out);
  }
  if (n->layout == XPACK_ET_XNN_LAYOUT_FULLY_CONNECTED) {
    const __typeof__(u->fully_connected)* f = &u->fully_connected;
    *output = f->output_id;
    const xp_replay_shape *in = xp_replay_shape_of(s, f->input1_id), *w = xp_replay_shape_of(s, f->filter_id);
    if (in == NULL || w == NULL || in->num_dims == 0 || w->num_dims != 2 || (f->flags & XPACK_XNN_FC_RESHAPE_2D_FLAG)) {
      return 0;
    }
    *out = *in; /* the input's dims, the last one the filter's output channels */
    out->dims[in->num_dims - 1] = (f->flags & XNN_FLAG_TRANSPOSE_WEIGHTS) ? w->dims[1] : w->dims[0];
    return 1;
  }
  if (n->layout == XPACK_ET_XNN_LAYOUT_CONV) {
    const __typeof__(u->conv)* c = &u->conv;
    *output = c->output_id;
    const xp_replay_shape* in = xp_replay_shape_of(s, c->input1_id);
    if (in == NULL || (c->flags & XNN_FLAG_TENSORFLOW_SAME_PADDING)) return 0;
    const int deconv = n->type == XPACK_ET_XNN_CONV_TRANSPOSE2D;
    return spatial(in, out, deconv, c->padding_top, c->padding_bottom, c->padding_left, c->padding_right,
                   c->kernel_height, c->kernel_width, c->subsampling_height, c->subsampling_width, c->dilation_height,
                   c->dilation_width, deconv ? c->adjustment_height : 0, deconv ? c->adjustment_width : 0,
                   (uint64_t)c->groups * c->group_output_channels);
  }
  if (n->layout == XPACK_ET_XNN_LAYOUT_POOLING &&
      (n->type == XPACK_ET_XNN_MAX_POOLING_2D || n->type == XPACK_ET_XNN_AVG_POOLING_2D)) {
    const __typeof__(u->pooling)* p = &u->pooling;
    *output = p->output_id;
    const xp_replay_shape* in = xp_replay_shape_of(s, p->input_id);
    if (in == NULL || (p->flags & XNN_FLAG_TENSORFLOW_SAME_PADDING)) return 0;
    const int dilated = n->type == XPACK_ET_XNN_MAX_POOLING_2D;
    return spatial(in, out, 0, p->padding_top, p->padding_bottom, p->padding_left, p->padding_right, p->pooling_height,
                   p->pooling_width, p->stride_height, p->stride_width, dilated ? p->dilation_height : 1,
                   dilated ? p->dilation_width : 1, 0, 0, 0);
  }
  if (n->layout == XPACK_ET_XNN_LAYOUT_STATIC_TRANSPOSE) {
    const __typeof__(u->transpose)* t = &u->transpose;
    *output = t->output_id;
    const xp_replay_shape* in = xp_replay_shape_of(s, t->input_id);
    if (in == NULL || t->perm.count != in->num_dims) return 0;
    out->num_dims = in->num_dims;
    for (uint32_t i = 0; i < t->perm.count; i++) {
      if (t->perm.data[i] >= in->num_dims) return 0;
      out->dims[i] = in->dims[t->perm.data[i]];
    }
    return 1;
  }
  if (n->layout == XPACK_ET_XNN_LAYOUT_STATIC_RESIZE_BILINEAR_2D) {
    *output = u->resize_bilinear.output_id;
    const xp_replay_shape* in = xp_replay_shape_of(s, u->resize_bilinear.input_id);
    if (in == NULL || in->num_dims != 4) return 0;
    *out = *in;
    out->dims[1] = u->resize_bilinear.new_height;
    out->dims[2] = u->resize_bilinear.new_width;
    return 1;
  }
  if (n->layout == XPACK_ET_XNN_LAYOUT_STATIC_CONSTANT_PAD) {
    const __typeof__(u->constant_pad)* p = &u->constant_pad;
    *output = p->output_id;
    const xp_replay_shape* in = xp_replay_shape_of(s, p->input_id);
    if (in == NULL || p->pre_paddings.count < in->num_dims || p->post_paddings.count < in->num_dims) return 0;
    *out = *in;
    for (uint8_t d = 0; d < in->num_dims; d++) {
      const uint64_t size = (uint64_t)in->dims[d] + p->pre_paddings.data[d] + p->post_paddings.data[d];
      if (size > UINT32_MAX) return 0;
      out->dims[d] = (uint32_t)size;
    }
    return 1;
  }
  if (n->layout == XPACK_ET_XNN_LAYOUT_CONCATENATE) {
    const __typeof__(u->concatenate)* c = &u->concatenate;
    *output = c->output_id;
    const uint32_t ids[5] = {c->input1_id, c->input2_id, c->input3_id, c->input4_id, c->input5_id};
    const int count = n->type == XPACK_ET_XNN_CONCATENATE2   ? 2
                      : n->type == XPACK_ET_XNN_CONCATENATE3 ? 3
                      : n->type == XPACK_ET_XNN_CONCATENATE4 ? 4
                                                             : 5;
    const xp_replay_shape* first = xp_replay_shape_of(s, ids[0]);
    if (first == NULL || c->axis >= first->num_dims) return 0;
    *out = *first;
    uint64_t along = first->dims[c->axis];
    for (int k = 1; k < count; k++) {
      const xp_replay_shape* in = xp_replay_shape_of(s, ids[k]);
      if (in == NULL || in->num_dims != first->num_dims) return 0;
      along += in->dims[c->axis];
    }
    if (along > UINT32_MAX) return 0;
    out->dims[c->axis] = (uint32_t)along;
    return 1;
  }
  if (n->layout == XPACK_ET_XNN_LAYOUT_STATIC_SLICE) {
    const __typeof__(u->slice)* sl = &u->slice;
    *output = sl->output_id;
    const xp_replay_shape* in = xp_replay_shape_of(s, sl->input_id);
    if (in == NULL || sl->sizes.count != in->num_dims) return 0;
    out->num_dims = in->num_dims;
    for (uint32_t d = 0; d < sl->sizes.count; d++) {
      if (sl->sizes.data[d] == 0) return 0; /* a size some XNNPACK versions read as "to the end" */
      out->dims[d] = sl->sizes.data[d];
    }
    return 1;
  }
  if (n->layout == XPACK_ET_XNN_LAYOUT_STATIC_RESHAPE) {
    const __typeof__(u->reshape)* r = &u->reshape;
    *output = r->output_id;
    if (r->new_shape.count == 0 || r->new_shape.count > XNN_MAX_TENSOR_DIMS) return 0;
    out->num_dims = (uint8_t)r->new_shape.count;
    for (uint32_t d = 0; d < r->new_shape.count; d++) {
      if (r->new_shape.data[d] == 0) return 0; /* a dim XNNPACK infers from the input's size */
      out->dims[d] = r->new_shape.data[d];
    }
    return 1;
  }
  *output = XNN_INVALID_VALUE_ID;
  return 0;
}

void xp_replay_shapes_note_node(xp_replay_state* s, const xpack_et_xnn_node* n) {
  if (s->shapes == NULL) return;
  uint32_t output = XNN_INVALID_VALUE_ID;
  xp_replay_shape shape;
  const int known = output_shape(s, n, &output, &shape);
  const xpack_et_xnn_value* v = output == XNN_INVALID_VALUE_ID ? NULL : xpack_et_xnn_graph_find_value(s->graph, output);
  if (v == NULL || is_static_or_input(v)) return; /* XNNPACK keeps such a value's own shape */
  if (known) s->shapes[v->index] = shape;
  else s->shapes[v->index].known = 0;
}
