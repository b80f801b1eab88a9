/* How XNNPACK's reshape computes a node's output shape from its inputs' shapes, node by node, as XNNPACK 4ea82e5,
 * 1adaa7c7 and 92a7ad50 do it (they agree on every node here). Where XNNPACK's own reshape would fail (shapes that
 * do not broadcast, a reshape whose element counts differ), the output is left unknown: the runtime never gets
 * that far, so no later check needs its size. */
#include <string.h>

#include "loader/xnn_compat.h"
#include "replay/replay_internal.h"

uint64_t xp_replay_window_extent(uint64_t kernel, uint64_t dilation) {
  return kernel ? (kernel - 1) * dilation + 1 : 0;
}

int xp_replay_extent_fits(uint64_t stride, uint64_t count, uint64_t rest, uint64_t max) {
  const uint64_t steps = count ? count - 1 : 0;
  if (stride != 0 && steps > max / stride) return 0;
  return rest <= max - stride * steps;
}

/* XNNPACK's output size of a convolution or pooling window over `in` (padding already added). */
static uint64_t window_output(uint64_t padded, uint64_t kernel, uint64_t dilation, uint64_t stride) {
  const uint64_t effective = xp_replay_window_extent(kernel, dilation ? dilation : 1);
  return (padded > effective ? padded - effective : 0) / stride + 1;
}

uint64_t xp_replay_deconv_output(uint64_t in, uint64_t padding, uint64_t adjustment, uint64_t kernel, uint64_t dilation,
                                 uint64_t stride) {
  const uint64_t full = stride * (in ? in - 1 : 0) + adjustment + xp_replay_window_extent(kernel, dilation);
  return full > padding ? full - padding : 0;
}

int xp_replay_window_of(const xpack_et_xnn_node* n, xp_replay_window* w) {
  memset(w, 0, sizeof *w);
  if (n->layout == XPACK_ET_XNN_LAYOUT_CONV) {
    const __typeof__(n->u.conv)* c = &n->u.conv;
    const int deconv = n->type == XPACK_ET_XNN_CONV_TRANSPOSE2D;
    *w = (xp_replay_window){
        .input_id = c->input1_id,
        .output_id = c->output_id,
        .deconv = deconv,
        .same_padding = (c->flags & XNN_FLAG_TENSORFLOW_SAME_PADDING) != 0,
        .padding = {(uint64_t)c->padding_top + c->padding_bottom, (uint64_t)c->padding_left + c->padding_right},
        .kernel = {c->kernel_height, c->kernel_width},
        .stride = {c->subsampling_height, c->subsampling_width},
        .dilation = {c->dilation_height, c->dilation_width},
        .adjustment = {deconv ? c->adjustment_height : 0, deconv ? c->adjustment_width : 0},
        .channels = (uint64_t)c->groups * c->group_output_channels,
    };
    return 1;
  }
  if (n->layout == XPACK_ET_XNN_LAYOUT_POOLING) {
    const __typeof__(n->u.pooling)* p = &n->u.pooling;
    const int dilated = n->type == XPACK_ET_XNN_MAX_POOLING_2D;
    *w = (xp_replay_window){
        .input_id = p->input_id,
        .output_id = p->output_id,
        .same_padding = (p->flags & XNN_FLAG_TENSORFLOW_SAME_PADDING) != 0,
        .padding = {(uint64_t)p->padding_top + p->padding_bottom, (uint64_t)p->padding_left + p->padding_right},
        .kernel = {p->pooling_height, p->pooling_width},
        .stride = {p->stride_height, p->stride_width},
        .dilation = {dilated ? p->dilation_height : 1, dilated ? p->dilation_width : 1},
    };
    return 1;
  }
  if (n->layout == XPACK_ET_XNN_LAYOUT_ARGMAX_POOLING) {
    const __typeof__(n->u.argmax_pooling)* p = &n->u.argmax_pooling;
    *w = (xp_replay_window){
        .input_id = p->input_id,
        .output_id = p->output_value_id, /* the index output takes the same shape: xp_replay_shapes_note_node */
        .argmax = 1,
        .same_padding = (p->flags & XNN_FLAG_TENSORFLOW_SAME_PADDING) != 0,
        .padding = {(uint64_t)p->padding_top + p->padding_bottom, (uint64_t)p->padding_left + p->padding_right},
        .kernel = {p->pooling_height, p->pooling_width},
        .stride = {p->pooling_height, p->pooling_width},
        .dilation = {1, 1},
    };
    return 1;
  }
  return 0;
}

uint64_t xp_replay_window_dim(const xp_replay_window* w, int d, uint64_t in) {
  if (w->same_padding) return (in + w->stride[d] - 1) / w->stride[d]; /* TensorFlow SAME: ceil(in / stride) */
  if (w->deconv) return xp_replay_deconv_output(in, w->padding[d], w->adjustment[d], w->kernel[d], w->dilation[d],
                                                w->stride[d]);
  if (w->argmax) return (in + w->padding[d]) / w->kernel[d];
  return window_output(in + w->padding[d], w->kernel[d], w->dilation[d], w->stride[d]);
}

/* NHWC output of a 2-D window node; 0 when unknown. */
static int spatial(const xp_replay_shape* in, const xp_replay_window* w, xp_replay_shape* out) {
  if (in->num_dims != 4 || w->stride[0] == 0 || w->stride[1] == 0 || w->kernel[0] == 0 || w->kernel[1] == 0) return 0;
  if (w->deconv && w->same_padding) return 0; /* no XNNPACK here defines it */
  const uint64_t h = xp_replay_window_dim(w, 0, in->dims[1]), wd = xp_replay_window_dim(w, 1, in->dims[2]);
  if (h > UINT32_MAX || wd > UINT32_MAX || w->channels > UINT32_MAX) return 0;
  *out = *in;
  out->dims[1] = (uint32_t)h;
  out->dims[2] = (uint32_t)wd;
  if (w->channels) out->dims[3] = (uint32_t)w->channels;
  return 1;
}

/* Numpy-style broadcasting of the `rank` leading dims of two shapes, each left-padded with 1s to `rank`, as
 * XNNPACK's binary elementwise and batch-matrix-multiply nodes do; 0 when they do not broadcast. */
static int broadcast_dims(const xp_replay_shape* a, const xp_replay_shape* b, uint8_t rank, uint8_t tail,
                          xp_replay_shape* out) {
  for (uint8_t i = 0; i < rank; i++) {
    const uint32_t x = i < rank + tail - a->num_dims ? 1 : a->dims[i - (rank + tail - a->num_dims)];
    const uint32_t y = i < rank + tail - b->num_dims ? 1 : b->dims[i - (rank + tail - b->num_dims)];
    if (x != y && x != 1 && y != 1) return 0;
    out->dims[i] = x == 1 ? y : x;
  }
  return 1;
}

static int broadcast(const xp_replay_shape* a, const xp_replay_shape* b, xp_replay_shape* out) {
  out->num_dims = a->num_dims > b->num_dims ? a->num_dims : b->num_dims;
  return broadcast_dims(a, b, out->num_dims, 0, out);
}

/* [batch..., M, K] x [batch..., K, N] (or [batch..., N, K] with XNN_FLAG_TRANSPOSE_B): [batch..., M, N]. */
static int batch_matrix_multiply(const xp_replay_shape* a, const xp_replay_shape* b, uint32_t flags,
                                 xp_replay_shape* out) {
  if (a->num_dims < 2 || b->num_dims < 2) return 0;
  const int transposed = (flags & XNN_FLAG_TRANSPOSE_B) != 0;
  const uint32_t k = a->dims[a->num_dims - 1];
  const uint32_t k_b = b->dims[b->num_dims - (transposed ? 1 : 2)];
  const uint32_t n = b->dims[b->num_dims - (transposed ? 2 : 1)];
  if (k != k_b) return 0;
  out->num_dims = a->num_dims > b->num_dims ? a->num_dims : b->num_dims;
  if (!broadcast_dims(a, b, (uint8_t)(out->num_dims - 2), 2, out)) return 0;
  out->dims[out->num_dims - 2] = a->dims[a->num_dims - 2];
  out->dims[out->num_dims - 1] = n;
  return 1;
}

/* The number of elements of a shape; 0 when it does not fit 64 bits. */
static uint64_t element_count(const xp_replay_shape* shape) {
  uint64_t count = 1;
  for (uint8_t d = 0; d < shape->num_dims; d++) {
    if (shape->dims[d] != 0 && count > UINT64_MAX / shape->dims[d]) return 0;
    count *= shape->dims[d];
  }
  return count;
}

/* XNNPACK's global average pooling reduces the two dims before the last (counted on the input as declared) to 1
 * with XNN_FLAG_KEEP_DIMS, and drops them without. */
static int global_average_pooling(const xp_replay_state* s, uint32_t input_id, const xp_replay_shape* in,
                                  uint32_t flags, xp_replay_shape* out) {
  const xpack_et_xnn_value* declared = xpack_et_xnn_graph_find_value(s->graph, input_id);
  if (declared == NULL || declared->num_dims < 3 || declared->num_dims != in->num_dims) return 0;
  const uint8_t first = (uint8_t)(in->num_dims - 3);
  *out = *in;
  if (flags & XNN_FLAG_KEEP_DIMS) {
    out->dims[first] = out->dims[first + 1] = 1;
  } else {
    out->num_dims = (uint8_t)(in->num_dims - 2);
    out->dims[first] = in->dims[in->num_dims - 1];
  }
  return 1;
}

/* The new shape of a static reshape: a 0 is the one dim XNNPACK infers from the input's element count. */
static int static_reshape(const xpack_et_u32_array* new_shape, const xp_replay_shape* in, xp_replay_shape* out) {
  if (new_shape->count == 0 || new_shape->count > XNN_MAX_TENSOR_DIMS) return 0;
  out->num_dims = (uint8_t)new_shape->count;
  int inferred = -1;
  for (uint32_t d = 0; d < new_shape->count; d++) {
    out->dims[d] = new_shape->data[d] ? new_shape->data[d] : 1;
    if (new_shape->data[d] != 0) continue;
    if (inferred >= 0) return 0; /* XNNPACK infers one dim at most */
    inferred = (int)d;
  }
  if (inferred < 0) return 1;
  const uint64_t total = in ? element_count(in) : 0, rest = element_count(out);
  if (total == 0 || rest == 0 || total % rest != 0 || total / rest > UINT32_MAX) return 0;
  out->dims[inferred] = (uint32_t)(total / rest);
  return 1;
}

/* A fully-connected layer's output: the input's dims with the filter's output channels last, or with
 * XNN_FLAG_TENSORFLOW_RESHAPE_2D [input elements / input channels, output channels]. */
static int fully_connected(const xp_replay_shape* in, const xp_replay_shape* filter, uint32_t flags,
                           xp_replay_shape* out) {
  if (in->num_dims == 0 || filter->num_dims != 2) return 0;
  const int transposed = (flags & XNN_FLAG_TRANSPOSE_WEIGHTS) != 0;
  const uint32_t output_channels = filter->dims[transposed ? 1 : 0], input_channels = filter->dims[transposed ? 0 : 1];
  if (flags & XPACK_XNN_FC_RESHAPE_2D_FLAG) {
    const uint64_t total = element_count(in);
    if (input_channels == 0 || total == 0 || total % input_channels != 0 || total / input_channels > UINT32_MAX) {
      return 0;
    }
    out->num_dims = 2;
    out->dims[0] = (uint32_t)(total / input_channels);
    out->dims[1] = output_channels;
    return 1;
  }
  *out = *in;
  out->dims[in->num_dims - 1] = output_channels;
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

static int unary_output(const xp_replay_state* s, const xpack_et_xnn_node* n, uint32_t* output, xp_replay_shape* out) {
  const __typeof__(n->u)* u = &n->u;
  const uint32_t in_id = n->layout == XPACK_ET_XNN_LAYOUT_ELU          ? u->elu.input_id
                         : n->layout == XPACK_ET_XNN_LAYOUT_LEAKY_RELU ? u->leaky_relu.input_id
                                                                       : u->unary.input_id;
  *output = n->layout == XPACK_ET_XNN_LAYOUT_ELU          ? u->elu.output_id
            : n->layout == XPACK_ET_XNN_LAYOUT_LEAKY_RELU ? u->leaky_relu.output_id
                                                          : u->unary.output_id;
  const xp_replay_shape* in = xp_replay_shape_of(s, in_id);
  if (in == NULL) return 0;
  if (n->type == XPACK_ET_XNN_GLOBAL_AVG_POOLING_2D) return global_average_pooling(s, in_id, in, u->unary.flags, out);
  if (!shape_preserving(n->type)) return 0;
  *out = *in;
  return 1;
}

static int binary_output(const xp_replay_state* s, const xpack_et_xnn_node* n, uint32_t* output, xp_replay_shape* out) {
  const __typeof__(n->u.binary)* b = &n->u.binary;
  *output = b->output_id;
  const xp_replay_shape *x = xp_replay_shape_of(s, b->input1_id), *y = xp_replay_shape_of(s, b->input2_id);
  if (n->type == XPACK_ET_XNN_PRELU && x != NULL) {
    *out = *x;
    return 1;
  }
  if (x == NULL || y == NULL) return 0;
  if (n->type == XPACK_ET_XNN_BATCH_MATRIX_MULTIPLY) return batch_matrix_multiply(x, y, b->flags, out);
  return is_binary_elementwise(n->type) && broadcast(x, y, out);
}

/* Convolution, deconvolution and pooling of every kind. */
static int window_node_output(const xp_replay_state* s, const xpack_et_xnn_node* n, uint32_t* output,
                              xp_replay_shape* out) {
  xp_replay_window w;
  if (!xp_replay_window_of(n, &w)) return 0;
  *output = w.output_id;
  const xp_replay_shape* in = xp_replay_shape_of(s, w.input_id);
  return in != NULL && spatial(in, &w, out);
}

static int transpose_output(const xp_replay_state* s, const xpack_et_xnn_node* n, uint32_t* output,
                            xp_replay_shape* out) {
  const __typeof__(n->u)* u = &n->u;
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

static int resize_output(const xp_replay_state* s, const xpack_et_xnn_node* n, uint32_t* output, xp_replay_shape* out) {
  const __typeof__(n->u)* u = &n->u;
  *output = u->resize_bilinear.output_id;
  const xp_replay_shape* in = xp_replay_shape_of(s, u->resize_bilinear.input_id);
  if (in == NULL || in->num_dims != 4) return 0;
  *out = *in;
  out->dims[1] = u->resize_bilinear.new_height;
  out->dims[2] = u->resize_bilinear.new_width;
  return 1;
}

static int constant_pad_output(const xp_replay_state* s, const xpack_et_xnn_node* n, uint32_t* output,
                               xp_replay_shape* out) {
  const __typeof__(n->u)* u = &n->u;
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

static int concatenate_output(const xp_replay_state* s, const xpack_et_xnn_node* n, uint32_t* output,
                              xp_replay_shape* out) {
  const __typeof__(n->u)* u = &n->u;
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

static int slice_output(const xp_replay_state* s, const xpack_et_xnn_node* n, uint32_t* output, xp_replay_shape* out) {
  const __typeof__(n->u)* u = &n->u;
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

int xp_replay_node_output_shape(const xp_replay_state* s, const xpack_et_xnn_node* n, uint32_t* output,
                                xp_replay_shape* out) {
  const __typeof__(n->u)* u = &n->u;
  memset(out, 0, sizeof *out);
  out->known = 1;
  *output = XNN_INVALID_VALUE_ID;
  switch (n->layout) {
    case XPACK_ET_XNN_LAYOUT_UNARY:
    case XPACK_ET_XNN_LAYOUT_ELU:
    case XPACK_ET_XNN_LAYOUT_LEAKY_RELU: return unary_output(s, n, output, out);
    case XPACK_ET_XNN_LAYOUT_BINARY: return binary_output(s, n, output, out);
    case XPACK_ET_XNN_LAYOUT_CONV:
    case XPACK_ET_XNN_LAYOUT_POOLING:
    case XPACK_ET_XNN_LAYOUT_ARGMAX_POOLING: return window_node_output(s, n, output, out);
    case XPACK_ET_XNN_LAYOUT_FULLY_CONNECTED: {
      const __typeof__(u->fully_connected)* f = &u->fully_connected;
      *output = f->output_id;
      const xp_replay_shape *in = xp_replay_shape_of(s, f->input1_id), *w = xp_replay_shape_of(s, f->filter_id);
      return in != NULL && w != NULL && fully_connected(in, w, f->flags, out);
    }
    case XPACK_ET_XNN_LAYOUT_STATIC_RESHAPE:
      *output = u->reshape.output_id;
      return static_reshape(&u->reshape.new_shape, xp_replay_shape_of(s, u->reshape.input_id), out);
    case XPACK_ET_XNN_LAYOUT_STATIC_TRANSPOSE: return transpose_output(s, n, output, out);
    case XPACK_ET_XNN_LAYOUT_STATIC_RESIZE_BILINEAR_2D: return resize_output(s, n, output, out);
    case XPACK_ET_XNN_LAYOUT_STATIC_CONSTANT_PAD: return constant_pad_output(s, n, output, out);
    case XPACK_ET_XNN_LAYOUT_CONCATENATE: return concatenate_output(s, n, output, out);
    case XPACK_ET_XNN_LAYOUT_STATIC_SLICE: return slice_output(s, n, output, out);
    default: return 0;
  }
}
