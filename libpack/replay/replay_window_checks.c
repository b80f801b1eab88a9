/* Checks of a 2-D window node (convolution, deconvolution, pooling) against the input shape XNNPACK's reshape will
 * give it (replay_shapes.c): paddings under which an XNNPACK xpack builds with computes a size below zero,
 * unsigned, and then allocates, reads or writes by it. */
#include <inttypes.h>
#include <stdio.h>

#include "common/error.h"
#include "loader/xnn_compat.h"
#include "replay/replay_internal.h"
#include "xpack.h"

/* XNNPACK computes a window's extent, stride x (count - 1) + rest, in size_t: where size_t has 32 bits a size past
 * 4 GiB wraps to a small one that the checks below, made in 64 bits, would pass (a deconvolution of stride 65536
 * over 65537 rows has an output of 1 there, below the stride: the case check_deconv_output exists for). */
static xpack_status too_large(const xp_replay_state* s, const xpack_et_xnn_node* n, int d, uint64_t stride,
                              uint64_t count, uint64_t rest, xpack_error* err) {
  return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): along its %s, %" PRIu64 " x (%" PRIu64 " - 1) + %" PRIu64
                 " is past the %zu-bit size_t XNNPACK computes it in here", s->graph->name, n->index, n->type_name,
                 d ? "width" : "height", stride, count, rest, sizeof(size_t) * 8);
}

/* XNNPACK 4ea82e5 splits a deconvolution into stride x stride sub-convolutions, each starting at an output
 * offset below the stride, and sizes each as (output - offset) / stride without checking that the output
 * reaches the offset: an output narrower than stride - 1 (or empty: XNNPACK saturates it at 0 when the padding
 * takes it all) makes that a huge unsigned number, and its indirection set-up writes out of bounds in reshape
 * (found by fuzz_replay). The input's size is the one XNNPACK will use (replay_shapes.c); where it is unknown (a node
 * before it has shapes XNNPACK's reshape refuses, so no runtime gets here), the smallest an input can be, 1. */
static xpack_status check_deconv_output(const xp_replay_state* s, const xpack_et_xnn_node* n, const xp_replay_window* w,
                                        xpack_error* err) {
  const xp_replay_shape* in = xp_replay_shape_of(s, w->input_id);
  const int known = in != NULL && in->num_dims == 4;
  const uint64_t in_size[2] = {known ? in->dims[1] : 1, known ? in->dims[2] : 1};
  const uint64_t* stride = w->stride;
  const uint64_t* padding = w->padding;
  for (int d = 0; d < 2; d++) {
    const uint64_t rest = w->adjustment[d] + xp_replay_window_extent(w->kernel[d], w->dilation[d]);
    if (!xp_replay_extent_fits(stride[d], in_size[d], rest, SIZE_MAX)) {
      return too_large(s, n, d, stride[d], in_size[d], rest, err);
    }
    /* The deconvolution's own arithmetic, whatever its flags say: XNNPACK's deconvolution has no SAME padding. */
    const uint64_t out = xp_replay_deconv_output(in_size[d], padding[d], w->adjustment[d], w->kernel[d], w->dilation[d],
                                                 stride[d]);
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
static xpack_status check_same_padding(const xp_replay_state* s, const xpack_et_xnn_node* n, const xp_replay_window* w,
                                       xpack_error* err) {
  const xp_replay_shape* in = xp_replay_shape_of(s, w->input_id);
  if (in == NULL || in->num_dims != 4) return XPACK_OK; /* XNNPACK refuses it before using a padding */
  for (int d = 0; d < 2; d++) {
    const uint64_t size = in->dims[1 + d], stride = w->stride[d];
    const uint64_t window = xp_replay_window_extent(w->kernel[d], w->dilation[d] ? w->dilation[d] : 1);
    if (stride == 0 || window >= stride) continue;
    const uint64_t out = xp_replay_window_dim(w, d, size);
    if (!xp_replay_extent_fits(stride, out, window, SIZE_MAX)) return too_large(s, n, d, stride, out, window, err);
    const uint64_t covered = (out ? out - 1 : 0) * stride + window;
    if (covered >= size) continue;
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): TensorFlow SAME padding over an input %s of %" PRIu64
                   " with stride %" PRIu64 " and a window of %" PRIu64 " needs a padding of %" PRIu64 " - %" PRIu64
                   ", below 0, which XNNPACK %s computes unsigned", s->graph->name, n->index, n->type_name,
                   d ? "width" : "height", size, stride, window, covered, size, XPACK_XNNPACK_VERSION);
  }
  return XPACK_OK;
}
#endif

/* XNNPACK's 2-D window nodes read their input as NHWC, and its global average pooling as [..., W, C], from whatever
 * dims the input has. Fewer (a crafted graph: ExecuTorch's exporter gives these nodes 4 dims) make XNNPACK's reshape
 * read dims the input lacks, or drop dims it does not have: a global average pooling over 2 dims handed the
 * fully-connected node after it a shape of no dims, which that node's reshape copied with a size of -8 (found by
 * a review). `least`: the dims the node needs (exactly, for a 2-D window node). */
static xpack_status check_input_dims(const xp_replay_state* s, const xpack_et_xnn_node* n, uint32_t input_id,
                                     uint8_t least, int exactly, xpack_error* err) {
  const xp_replay_shape* in = xp_replay_shape_of(s, input_id);
  if (in == NULL || (exactly ? in->num_dims == least : in->num_dims >= least)) return XPACK_OK;
  return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): its input (value id %u) has %u dims, expected %s%u",
                 s->graph->name, n->index, n->type_name, input_id, in->num_dims, exactly ? "" : "at least ", least);
}

/* A window longer than its padded input on either axis: PyTorch refuses such a node. XNNPACK makes its output 1
 * wide and, with no padding, allocates no zero buffer for the taps past the input: they are NULL pointers that
 * inference reads (a convolution over 32 columns with a dilated window of 201 crashed `xpack run`, found by a
 * review). */
static xpack_status check_window_fits(const xp_replay_state* s, const xpack_et_xnn_node* n, const xp_replay_window* w,
                                      xpack_error* err) {
  const xp_replay_shape* in = xp_replay_shape_of(s, w->input_id);
  if (in == NULL || in->num_dims != 4) return XPACK_OK;
  for (int d = 0; d < 2; d++) {
    const uint64_t padded = (uint64_t)in->dims[1 + d] + w->padding[d];
    const uint64_t window = xp_replay_window_extent(w->kernel[d], w->dilation[d] ? w->dilation[d] : 1);
    if (window <= padded) continue;
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): its window is %" PRIu64 " %s (kernel %" PRIu64
                   ", dilation %" PRIu64 "), longer than its input's %" PRIu64 " with padding %" PRIu64 "; expected at "
                   "most %" PRIu64, s->graph->name, n->index, n->type_name, window, d ? "wide" : "high", w->kernel[d],
                   w->dilation[d], (uint64_t)in->dims[1 + d], w->padding[d], padded);
  }
  return XPACK_OK;
}

xpack_status xp_replay_check_window(const xp_replay_state* s, const xpack_et_xnn_node* n, xpack_error* err) {
  if (n->type == XPACK_ET_XNN_GLOBAL_AVG_POOLING_2D) return check_input_dims(s, n, n->u.unary.input_id, 3, 0, err);
  xp_replay_window w;
  if (!xp_replay_window_of(n, &w)) return XPACK_OK;
  xpack_status st = check_input_dims(s, n, w.input_id, 4, 1, err); /* NHWC: the checks below read dims 1 and 2 */
  if (st != XPACK_OK) return st;
  if (n->type == XPACK_ET_XNN_CONV_TRANSPOSE2D) return check_deconv_output(s, n, &w, err);
  if (!w.same_padding) return check_window_fits(s, n, &w, err);
#if XPACK_XNN_SAME_PADDING_UNSIGNED
  const int same_padding_unsigned = n->type == XPACK_ET_XNN_CONV2D || n->type == XPACK_ET_XNN_DEPTHWISE_CONV2D ||
                                    n->type == XPACK_ET_XNN_AVG_POOLING_2D; /* max and argmax pooling saturate it */
  if (same_padding_unsigned && w.same_padding) return check_same_padding(s, n, &w, err);
#endif
  return XPACK_OK;
}
