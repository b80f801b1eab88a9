/* Checks of a 2-D window node (convolution, deconvolution, pooling) against the input shape XNNPACK's reshape will
 * give it (replay_shapes.c): paddings under which an XNNPACK xpack builds with computes a size below zero,
 * unsigned, and then allocates, reads or writes by it. */
#include <inttypes.h>
#include <stdio.h>

#include "common/error.h"
#include "loader/xnn_compat.h"
#include "replay/replay_internal.h"
#include "xpack.h"

/* XNNPACK 4ea82e5 splits a deconvolution into stride x stride sub-convolutions, each starting at an output
 * offset below the stride, and sizes each as (output - offset) / stride without checking that the output
 * reaches the offset: an output narrower than stride - 1 (or empty: XNNPACK saturates it at 0 when the padding
 * takes it all) makes that a huge unsigned number, and its indirection set-up writes out of bounds in reshape
 * (found by fuzz_replay). The input's size is the one XNNPACK will use (replay_shapes.c); where it is unknown (a node
 * before it has shapes XNNPACK's reshape refuses, so no runtime gets here), the smallest an input can be, 1. */
static xpack_status check_deconv_output(const xp_replay_state* s, const xpack_et_xnn_node* n, xpack_error* err) {
  const __typeof__(n->u.conv)* c = &n->u.conv;
  const xp_replay_shape* in = xp_replay_shape_of(s, c->input1_id);
  const int known = in != NULL && in->num_dims == 4;
  const uint64_t in_size[2] = {known ? in->dims[1] : 1, known ? in->dims[2] : 1};
  const uint64_t stride[2] = {c->subsampling_height, c->subsampling_width};
  const uint64_t kernel[2] = {c->kernel_height, c->kernel_width};
  const uint64_t dilation[2] = {c->dilation_height, c->dilation_width};
  const uint64_t adjustment[2] = {c->adjustment_height, c->adjustment_width};
  const uint64_t padding[2] = {(uint64_t)c->padding_top + c->padding_bottom, (uint64_t)c->padding_left + c->padding_right};
  for (int d = 0; d < 2; d++) {
    const uint64_t out = xp_replay_deconv_output(in_size[d], padding[d], adjustment[d], kernel[d], dilation[d], stride[d]);
    const uint64_t least = stride[d] > 2 ? stride[d] - 1 : 1;
    if (out >= least) continue;
    char size[96];
    snprintf(size, sizeof size, known ? "its input's %s is %" PRIu64 : "its input's %s is unknown, taken as %" PRIu64,
             d ? "width" : "height", in_size[d]);
    if (out == 0) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): %s padding %" PRIu64 " leaves no output (%s)",
                     s->graph->name, n->index, n->type_name, d ? "horizontal" : "vertical", padding[d], size);
    }
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): %s padding %" PRIu64 " leaves an output of %" PRIu64
                   ", less than the %" PRIu64 " XNNPACK needs with stride %" PRIu64 " (%s)", s->graph->name, n->index,
                   n->type_name, d ? "horizontal" : "vertical", padding[d], out, least, stride[d], size);
  }
  return XPACK_OK;
}


#if XPACK_XNN_SAME_PADDING_UNSIGNED
/* XNNPACK 4ea82e5 and 1adaa7c7 compute TensorFlow SAME padding as (output - 1) x stride + window - input in
 * unsigned arithmetic, output = ceil(input / stride): a window smaller than the stride can take that below zero. An
 * average pooling then asks for an indirection buffer of about 100 GB (the reshape fails as out of memory, or
 * where memory is overcommitted, touches it), and a convolution computes from padding only. */
static xpack_status check_same_padding(const xp_replay_state* s, const xpack_et_xnn_node* n, uint32_t input_id,
                                       const uint64_t window[2], const uint64_t stride[2], xpack_error* err) {
  const xp_replay_shape* in = xp_replay_shape_of(s, input_id);
  if (in == NULL || in->num_dims != 4) return XPACK_OK; /* XNNPACK refuses it before using a padding */
  for (int d = 0; d < 2; d++) {
    const uint64_t size = in->dims[1 + d];
    if (stride[d] == 0 || window[d] >= stride[d]) continue;
    const uint64_t out = (size + stride[d] - 1) / stride[d];
    const uint64_t covered = (out ? out - 1 : 0) * stride[d] + window[d];
    if (covered >= size) continue;
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): TensorFlow SAME padding over an input %s of %" PRIu64
                   " with stride %" PRIu64 " and a window of %" PRIu64 " needs a padding of %" PRIu64 " - %" PRIu64
                   ", below 0, which XNNPACK %s computes unsigned", s->graph->name, n->index, n->type_name,
                   d ? "width" : "height", size, stride[d], window[d], covered, size, XPACK_XNNPACK_VERSION);
  }
  return XPACK_OK;
}
#endif

xpack_status xp_replay_check_window(const xp_replay_state* s, const xpack_et_xnn_node* n, xpack_error* err) {
  if (n->type == XPACK_ET_XNN_CONV_TRANSPOSE2D) return check_deconv_output(s, n, err);
#if XPACK_XNN_SAME_PADDING_UNSIGNED
  if ((n->type == XPACK_ET_XNN_CONV2D || n->type == XPACK_ET_XNN_DEPTHWISE_CONV2D) &&
      (n->u.conv.flags & XNN_FLAG_TENSORFLOW_SAME_PADDING)) {
    const __typeof__(n->u.conv)* c = &n->u.conv;
    const uint64_t dilation[2] = {c->dilation_height ? c->dilation_height : 1, c->dilation_width ? c->dilation_width : 1};
    const uint64_t window[2] = {c->kernel_height ? ((uint64_t)c->kernel_height - 1) * dilation[0] + 1 : 0,
                                c->kernel_width ? ((uint64_t)c->kernel_width - 1) * dilation[1] + 1 : 0};
    const uint64_t stride[2] = {c->subsampling_height, c->subsampling_width};
    return check_same_padding(s, n, c->input1_id, window, stride, err);
  }
  if (n->type == XPACK_ET_XNN_AVG_POOLING_2D && (n->u.pooling.flags & XNN_FLAG_TENSORFLOW_SAME_PADDING)) {
    const __typeof__(n->u.pooling)* p = &n->u.pooling;
    const uint64_t window[2] = {p->pooling_height, p->pooling_width}, stride[2] = {p->stride_height, p->stride_width};
    return check_same_padding(s, n, p->input_id, window, stride, err);
  }
#endif
  return XPACK_OK;
}
