/* Defining a delegate's nodes the way ExecuTorch's XNNPACK backend does: one xnn_define_* per XNode. */
#include <math.h>
#include <string.h>

#include "common/error.h"
#include "loader/xnn_compat.h"
#include "replay/replay_internal.h"
#include "xpack.h"

typedef struct ids {
  xp_replay_state* s;
  const xpack_et_xnn_node* node;
  xpack_error* err;
  int failed;
} ids;

/* XNNPACK's id for a serialized id of this node; records a failure naming the node. */
static uint32_t id(ids* x, uint32_t serialized) {
  uint32_t defined = XNN_INVALID_VALUE_ID;
  if (!x->failed && xp_replay_lookup_id(x->s, serialized, &defined) != 0) {
    xp_fail(x->err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): value id %u is not defined", x->s->graph->name,
            x->node->index, x->node->type_name, serialized);
    x->failed = 1;
  }
  return defined;
}

static size_t* to_sizes(xp_replay_state* s, const xpack_et_u32_array* a, size_t expected) {
  size_t n = a->count > expected ? a->count : expected;
  size_t* out = xp_replay_scratch_alloc(s, (n ? n : 1) * sizeof *out);
  if (out == NULL) return NULL;
  for (size_t i = 0; i < n; i++) out[i] = i < a->count ? a->data[i] : 0;
  return out;
}

static enum xnn_unary_operator unary_of(int type) {
  switch (type) {
    case XPACK_ET_XNN_SIGMOID: return xnn_unary_sigmoid;
    case XPACK_ET_XNN_FLOOR: return xnn_unary_floor;
    case XPACK_ET_XNN_CONVERT: return xnn_unary_convert;
    case XPACK_ET_XNN_SQUARE_ROOT: return xnn_unary_square_root;
    case XPACK_ET_XNN_CEILING: return xnn_unary_ceiling;
    case XPACK_ET_XNN_HARDSWISH: return xnn_unary_hardswish;
    case XPACK_ET_XNN_NEGATE: return xnn_unary_negate;
    case XPACK_ET_XNN_SQUARE: return xnn_unary_square;
    case XPACK_ET_XNN_ABS: return xnn_unary_abs;
    case XPACK_ET_XNN_RECIPROCAL_SQUARE_ROOT: return xnn_unary_reciprocal_square_root;
    case XPACK_ET_XNN_LOG: return xnn_unary_log;
    case XPACK_ET_XNN_GELU: return xnn_unary_gelu;
    case XPACK_ET_XNN_TANH: return xnn_unary_tanh;
    case XPACK_ET_XNN_EXP: return xnn_unary_exp;
    case XPACK_ET_XNN_SIN: return xnn_unary_sine;
    case XPACK_ET_XNN_COS: return xnn_unary_cosine;
    case XPACK_ET_XNN_CLAMP: return xnn_unary_clamp;
    case XPACK_ET_XNN_LEAKY_RELU: return xnn_unary_leaky_relu;
    case XPACK_ET_XNN_ELU: return xnn_unary_elu;
    default: return xnn_unary_invalid;
  }
}

static enum xnn_binary_operator binary_of(int type) {
  switch (type) {
    case XPACK_ET_XNN_ADD: return xnn_binary_add;
    case XPACK_ET_XNN_SUBTRACT: return xnn_binary_subtract;
    case XPACK_ET_XNN_MULTIPLY: return xnn_binary_multiply;
    case XPACK_ET_XNN_DIV: return xnn_binary_divide;
    case XPACK_ET_XNN_MINIMUM: return xnn_binary_minimum;
    case XPACK_ET_XNN_MAXIMUM: return xnn_binary_maximum;
    case XPACK_ET_XNN_PRELU: return xnn_binary_prelu;
    default: return xnn_binary_invalid;
  }
}

/* A fully-connected node whose input, filter and output are all bf16. XNNPACK has only a bf16 x bf16 -> fp32
 * fully-connected (XNNPACK 1adaa7c7 and 92a7ad50 refuse a bf16 output), so ExecuTorch main (cff6f4dd,
 * XNNCompiler.cpp, defineFullyConnectedNode) defines such a node into an internal fp32 tensor of the
 * output's dims and converts that into the bf16 output. The rewrite is main's: ExecuTorch v1.4.0 defines the
 * bf16 output directly, XNNPACK refuses it, and v1.4.0 cannot run such a graph at all, so replaying main's
 * way serves the only runtime that can. Decided, as main decides, from the serialized datatypes. */
static int is_bf16_throughout(const xp_replay_state* s, const xpack_et_xnn_node* n) {
  const uint32_t serialized[3] = {n->u.fully_connected.input1_id, n->u.fully_connected.filter_id,
                                  n->u.fully_connected.output_id};
  for (int k = 0; k < 3; k++) {
    const xpack_et_xnn_value* v = xpack_et_xnn_graph_find_value(s->graph, serialized[k]);
    if (v == NULL || v->datatype != XPACK_ET_XNN_DT_BF16) return 0;
  }
  return 1;
}

/* The internal fp32 tensor of the serialized value's dims that main defines for the rewrite above, noted as
 * fp32 so the node's packing family is the one XNNPACK packs (bf16 x bf16 -> f32). */
static enum xnn_status define_fp32_like(xp_replay_state* s, uint32_t serialized, uint32_t* id) {
  const xpack_et_xnn_value* v = xpack_et_xnn_graph_find_value(s->graph, serialized);
  size_t dims[XNN_MAX_TENSOR_DIMS];
  if (v->num_dims > XNN_MAX_TENSOR_DIMS) return xnn_status_invalid_parameter;
  for (uint32_t d = 0; d < v->num_dims; d++) dims[d] = v->dims[d];
  enum xnn_status xs = xnn_define_tensor_value(s->subgraph, xnn_datatype_fp32, v->num_dims, dims, NULL,
                                               XNN_INVALID_VALUE_ID, 0, id);
  if (xs == xnn_status_success && xp_replay_note_value(s, *id, xnn_datatype_fp32, NULL, 0) != XPACK_OK) {
    return xnn_status_out_of_memory;
  }
  return xs;
}

xpack_status xp_replay_define_node(xp_replay_state* s, const xpack_et_xnn_node* n, xpack_error* err) {
  ids x = {s, n, err, 0};
  const float lo = n->has_output_min_max ? n->output_min : -INFINITY;
  const float hi = n->has_output_min_max ? n->output_max : INFINITY;
  xnn_subgraph_t g = s->subgraph;
  enum xnn_status xs = xnn_status_success;
  switch (n->type) {
    case XPACK_ET_XNN_ADD:
    case XPACK_ET_XNN_SUBTRACT:
    case XPACK_ET_XNN_MULTIPLY:
    case XPACK_ET_XNN_DIV:
    case XPACK_ET_XNN_MINIMUM:
    case XPACK_ET_XNN_MAXIMUM:
    case XPACK_ET_XNN_PRELU: {
      /* add/sub/mul/div carry the node's output range; min/max/prelu are defined without one. */
      const int ranged = n->type == XPACK_ET_XNN_ADD || n->type == XPACK_ET_XNN_SUBTRACT ||
                         n->type == XPACK_ET_XNN_MULTIPLY || n->type == XPACK_ET_XNN_DIV;
      struct xnn_binary_params params = {lo, hi};
      uint32_t a = id(&x, n->u.binary.input1_id), b = id(&x, n->u.binary.input2_id), o = id(&x, n->u.binary.output_id);
      if (!x.failed) xs = xnn_define_binary(g, binary_of(n->type), ranged ? &params : NULL, a, b, o, n->u.binary.flags);
      break;
    }
    case XPACK_ET_XNN_BATCH_MATRIX_MULTIPLY: {
      uint32_t a = id(&x, n->u.binary.input1_id), b = id(&x, n->u.binary.input2_id), o = id(&x, n->u.binary.output_id);
      if (!x.failed) xs = xnn_define_batch_matrix_multiply(g, a, b, o, n->u.binary.flags);
      break;
    }
    case XPACK_ET_XNN_SOFTMAX:
    case XPACK_ET_XNN_COPY:
    case XPACK_ET_XNN_GLOBAL_AVG_POOLING_2D: {
      uint32_t i = id(&x, n->u.unary.input_id), o = id(&x, n->u.unary.output_id);
      if (x.failed) break;
      if (n->type == XPACK_ET_XNN_SOFTMAX) xs = xnn_define_softmax(g, i, o, n->u.unary.flags);
      else if (n->type == XPACK_ET_XNN_COPY) xs = xnn_define_copy(g, i, o, n->u.unary.flags);
      else xs = xnn_define_global_average_pooling_2d(g, lo, hi, i, o, n->u.unary.flags);
      break;
    }
    case XPACK_ET_XNN_ELU: {
      union xnn_unary_params p = {.elu = {n->u.elu.alpha}};
      uint32_t i = id(&x, n->u.elu.input_id), o = id(&x, n->u.elu.output_id);
      if (!x.failed) xs = xnn_define_unary(g, xnn_unary_elu, &p, i, o, n->u.elu.flags);
      break;
    }
    case XPACK_ET_XNN_LEAKY_RELU: {
      union xnn_unary_params p = {.leaky_relu = {n->u.leaky_relu.negative_slope}};
      uint32_t i = id(&x, n->u.leaky_relu.input_id), o = id(&x, n->u.leaky_relu.output_id);
      if (!x.failed) xs = xnn_define_unary(g, xnn_unary_leaky_relu, &p, i, o, n->u.leaky_relu.flags);
      break;
    }
    case XPACK_ET_XNN_FULLY_CONNECTED: {
      uint32_t i = id(&x, n->u.fully_connected.input1_id), w = id(&x, n->u.fully_connected.filter_id),
               b = id(&x, n->u.fully_connected.bias_id), o = id(&x, n->u.fully_connected.output_id);
      if (x.failed) break;
      if (xp_replay_check_fully_connected(s, n, err) != XPACK_OK) return XPACK_ERR_BAD_INPUT;
      uint32_t computed = o;
      if (is_bf16_throughout(s, n)) {
        xs = define_fp32_like(s, n->u.fully_connected.output_id, &computed);
        if (xs == xnn_status_out_of_memory) return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
        if (xs != xnn_status_success) break;
      }
      xs = xnn_define_fully_connected(g, lo, hi, i, w, b, computed, n->u.fully_connected.flags);
      /* ExecuTorch main calls xnn_define_convert, which is this unary convert. */
      if (xs == xnn_status_success && computed != o) xs = xnn_define_unary(g, xnn_unary_convert, NULL, computed, o, 0);
      if (xs == xnn_status_success &&
          xp_replay_note_family(s, XPACK_OP_FULLY_CONNECTED, n->index, i, w, b, computed, n->u.fully_connected.flags) !=
              XPACK_OK) {
        return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
      }
      break;
    }
    case XPACK_ET_XNN_CONV2D:
    case XPACK_ET_XNN_DEPTHWISE_CONV2D:
    case XPACK_ET_XNN_CONV_TRANSPOSE2D: {
      const __typeof__(n->u.conv)* c = &n->u.conv;
      uint32_t i = id(&x, c->input1_id), w = id(&x, c->filter_id), b = id(&x, c->bias_id), o = id(&x, c->output_id);
      if (x.failed) break;
      if (xp_replay_check_conv(s, n, err) != XPACK_OK) return XPACK_ERR_BAD_INPUT;
      if (n->type == XPACK_ET_XNN_CONV2D) {
        xs = xnn_define_convolution_2d(g, c->padding_top, c->padding_right, c->padding_bottom, c->padding_left,
                                       c->kernel_height, c->kernel_width, c->subsampling_height, c->subsampling_width,
                                       c->dilation_height, c->dilation_width, c->groups, c->group_input_channels,
                                       c->group_output_channels, lo, hi, i, w, b, o, c->flags);
        if (xs == xnn_status_success &&
            xp_replay_note_family(s, XPACK_OP_CONVOLUTION_2D, n->index, i, w, b, o, c->flags) != XPACK_OK) {
          return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
        }
      } else if (n->type == XPACK_ET_XNN_DEPTHWISE_CONV2D) {
        if (c->group_input_channels == 0) {
          xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (DepthwiseConv2d): group_input_channels is 0",
                  s->graph->name, n->index);
          return XPACK_ERR_BAD_INPUT;
        }
        xs = xnn_define_depthwise_convolution_2d(
            g, c->padding_top, c->padding_right, c->padding_bottom, c->padding_left, c->kernel_height, c->kernel_width,
            c->subsampling_height, c->subsampling_width, c->dilation_height, c->dilation_width,
            c->group_output_channels / c->group_input_channels, c->groups, lo, hi, i, w, b, o, c->flags);
#if XPACK_XNN_CACHES_DEPTHWISE_WEIGHTS
        if (xs == xnn_status_success &&
            xp_replay_note_family(s, XPACK_OP_DEPTHWISE_CONVOLUTION_2D, n->index, i, w, b, o, c->flags) != XPACK_OK) {
          return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
        }
#endif
      } else {
        xs = xnn_define_deconvolution_2d(g, c->padding_top, c->padding_right, c->padding_bottom, c->padding_left,
                                         c->adjustment_height, c->adjustment_width, c->kernel_height, c->kernel_width,
                                         c->subsampling_height, c->subsampling_width, c->dilation_height,
                                         c->dilation_width, c->groups, c->group_input_channels,
                                         c->group_output_channels, lo, hi, i, w, b, o, c->flags);
        if (xs == xnn_status_success &&
            xp_replay_note_family(s, XPACK_OP_DECONVOLUTION_2D, n->index, i, w, b, o, c->flags) != XPACK_OK) {
          return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
        }
      }
      break;
    }
    case XPACK_ET_XNN_AVG_POOLING_2D:
    case XPACK_ET_XNN_MAX_POOLING_2D: {
      const __typeof__(n->u.pooling)* p = &n->u.pooling;
      uint32_t i = id(&x, p->input_id), o = id(&x, p->output_id);
      if (x.failed) break;
      if (n->type == XPACK_ET_XNN_AVG_POOLING_2D) {
        xs = xnn_define_average_pooling_2d(g, p->padding_top, p->padding_right, p->padding_bottom, p->padding_left,
                                           p->pooling_height, p->pooling_width, p->stride_height, p->stride_width, lo,
                                           hi, i, o, p->flags);
      } else {
        xs = xnn_define_max_pooling_2d(g, p->padding_top, p->padding_right, p->padding_bottom, p->padding_left,
                                       p->pooling_height, p->pooling_width, p->stride_height, p->stride_width,
                                       p->dilation_height, p->dilation_width, lo, hi, i, o, p->flags);
      }
      break;
    }
    case XPACK_ET_XNN_ARGMAX_POOLING_2D: {
      const __typeof__(n->u.argmax_pooling)* p = &n->u.argmax_pooling;
      uint32_t i = id(&x, p->input_id), v = id(&x, p->output_value_id), k = id(&x, p->output_index_id);
      if (!x.failed) {
        xs = xnn_define_argmax_pooling_2d(g, p->padding_top, p->padding_right, p->padding_bottom, p->padding_left,
                                          p->pooling_height, p->pooling_width, i, v, k, p->flags);
      }
      break;
    }
    case XPACK_ET_XNN_CONCATENATE2:
    case XPACK_ET_XNN_CONCATENATE3:
    case XPACK_ET_XNN_CONCATENATE4:
    case XPACK_ET_XNN_CONCATENATE5: {
      const __typeof__(n->u.concatenate)* c = &n->u.concatenate;
      const int32_t axis = (int32_t)c->axis;
      uint32_t a = id(&x, c->input1_id), b = id(&x, c->input2_id), o = id(&x, c->output_id);
      uint32_t d = XNN_INVALID_VALUE_ID, e = XNN_INVALID_VALUE_ID, f = XNN_INVALID_VALUE_ID;
      if (n->type != XPACK_ET_XNN_CONCATENATE2) d = id(&x, c->input3_id);
      if (n->type == XPACK_ET_XNN_CONCATENATE4 || n->type == XPACK_ET_XNN_CONCATENATE5) e = id(&x, c->input4_id);
      if (n->type == XPACK_ET_XNN_CONCATENATE5) f = id(&x, c->input5_id);
      if (x.failed) break;
      if (n->type == XPACK_ET_XNN_CONCATENATE2) xs = xnn_define_concatenate2(g, axis, a, b, o, c->flags);
      else if (n->type == XPACK_ET_XNN_CONCATENATE3) xs = xnn_define_concatenate3(g, axis, a, b, d, o, c->flags);
      else if (n->type == XPACK_ET_XNN_CONCATENATE4) xs = xnn_define_concatenate4(g, axis, a, b, d, e, o, c->flags);
      else xs = xnn_define_concatenate5(g, axis, a, b, d, e, f, o, c->flags);
      break;
    }
    case XPACK_ET_XNN_STATIC_TRANSPOSE: {
      const __typeof__(n->u.transpose)* t = &n->u.transpose;
      uint32_t i = id(&x, t->input_id), o = id(&x, t->output_id);
      size_t* perm = to_sizes(s, &t->perm, t->num_dims);
      if (!x.failed && perm) xs = xnn_define_static_transpose(g, t->num_dims, perm, i, o, t->flags);
      break;
    }
    case XPACK_ET_XNN_STATIC_RESIZE_BILINEAR_2D: {
      const __typeof__(n->u.resize_bilinear)* r = &n->u.resize_bilinear;
      uint32_t i = id(&x, r->input_id), o = id(&x, r->output_id);
      if (!x.failed) xs = xnn_define_static_resize_bilinear_2d(g, r->new_height, r->new_width, i, o, r->flags);
      break;
    }
    case XPACK_ET_XNN_STATIC_CONSTANT_PAD: {
      const __typeof__(n->u.constant_pad)* p = &n->u.constant_pad;
      uint32_t i = id(&x, p->input_id), o = id(&x, p->output_id);
      size_t* pre = to_sizes(s, &p->pre_paddings, XNN_MAX_TENSOR_DIMS);
      size_t* post = to_sizes(s, &p->post_paddings, XNN_MAX_TENSOR_DIMS);
      if (!x.failed && pre && post) xs = xnn_define_static_constant_pad(g, pre, post, p->padding_value, i, o, p->flags);
      break;
    }
    case XPACK_ET_XNN_STATIC_RESHAPE: {
      const __typeof__(n->u.reshape)* r = &n->u.reshape;
      uint32_t i = id(&x, r->input_id), o = id(&x, r->output_id);
      size_t* shape = to_sizes(s, &r->new_shape, r->num_dims);
      if (!x.failed && shape) xs = xnn_define_static_reshape(g, r->num_dims, shape, i, o, r->flags);
      break;
    }
    case XPACK_ET_XNN_STATIC_SLICE: {
      const __typeof__(n->u.slice)* sl = &n->u.slice;
      uint32_t i = id(&x, sl->input_id), o = id(&x, sl->output_id);
      size_t* offsets = to_sizes(s, &sl->offsets, sl->num_dims);
      size_t* sizes = to_sizes(s, &sl->sizes, sl->num_dims);
      if (!x.failed && offsets && sizes) xs = xnn_define_static_slice(g, sl->num_dims, offsets, sizes, i, o, sl->flags);
      break;
    }
    case XPACK_ET_XNN_SCALED_DOT_PRODUCT_ATTENTION:
      return xp_fail(err, XPACK_ERR_UNSUPPORTED,
                     "%s: node %u (ScaledDotProductAttention): XNNPACK %s cannot define this node (ExecuTorch never "
                     "compiles it either)", s->graph->name, n->index, XPACK_XNNPACK_VERSION);
    default: {
      enum xnn_unary_operator op = unary_of(n->type);
      if (op == xnn_unary_invalid) {
        return xp_fail(err, XPACK_ERR_UNSUPPORTED, "%s: node %u (%s, type %u): no XNNPACK definition for it",
                       s->graph->name, n->index, n->type_name, n->type);
      }
      union xnn_unary_params p = {.clamp = {lo, hi}};
      uint32_t i = id(&x, n->u.unary.input_id), o = id(&x, n->u.unary.output_id);
      if (!x.failed) xs = xnn_define_unary(g, op, op == xnn_unary_clamp ? &p : NULL, i, o, n->u.unary.flags);
      break;
    }
  }
  if (x.failed) return XPACK_ERR_BAD_INPUT;
  if (xs != xnn_status_success) {
    return xp_fail(err, xp_replay_define_refusal(xs), "%s: node %u (%s): XNNPACK refused to define it (status %d: %s)",
                   s->graph->name, n->index, n->type_name, (int)xs, xp_xnn_status_text(xs));
  }
  return XPACK_OK;
}
