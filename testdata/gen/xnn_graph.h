/* An XNNGraph as ExecuTorch's XNNPACK partitioner serializes it, and its delegate blob
 * (XH00 header + XN01 flatbuffer + constant region). Constants are always named-data references. */
#ifndef XPACK_GEN_XNN_GRAPH_H
#define XPACK_GEN_XNN_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "weights.h"

#define XNN_INVALID_ID 0xffffffffu
#define XNN_FLAG_EXTERNAL_INPUT 1u
#define XNN_FLAG_EXTERNAL_OUTPUT 2u
#define XNN_FLAG_KEEP_DIMS 64u
#define XG_MAX_DIMS 6

/* Serialized XNNDatatype numbers. */
enum {
  XDT_FP32 = 1, XDT_FP16 = 2, XDT_QINT8 = 3, XDT_QCINT8 = 6, XDT_QCINT4 = 8, XDT_QDINT8 = 9, XDT_QBINT4 = 10,
  XDT_BF16 = 14,
};

/* XNodeUnion type codes. */
enum {
  XN_ADD = 1, XN_FULLY_CONNECTED = 2, XN_SIGMOID = 4, XN_STATIC_TRANSPOSE = 5, XN_CONV2D = 7,
  XN_DEPTHWISE_CONV2D = 13, XN_MULTIPLY = 15, XN_CONVERT = 18, XN_GLOBAL_AVG_POOLING2D = 19,
  XN_STATIC_RESHAPE = 20, XN_BATCH_MATRIX_MULTIPLY = 37, XN_CONV_TRANSPOSE2D = 39,
};

typedef enum xg_quant { XQ_NONE, XQ_PER_CHANNEL, XQ_PER_TENSOR, XQ_PER_TOKEN, XQ_PER_CHANNEL_GROUP } xg_quant;

typedef struct xg_value {
  int16_t datatype;
  uint32_t num_dims;
  uint32_t dims[XG_MAX_DIMS];
  uint32_t constant_idx;
  uint32_t external_id;
  uint32_t flags;
  uint32_t id_out;
  xg_quant quant;
  float tensor_scale;
  int32_t zero_point;
  int32_t channel_dim, group_size, num_nonbatch_dims;
  uint32_t scale_idx, num_scales;
} xg_value;

/* Node tables are all "uint fields in id order", at most one of them a [uint] vector. */
typedef struct xg_node {
  uint8_t type;
  uint32_t debug_handle;
  int has_min_max;
  float out_min, out_max;
  int nfields;
  uint32_t fields[20];
  int vec_slot; /* -1: none */
  uint32_t vec[XG_MAX_DIMS];
  int vec_len;
} xg_node;

typedef struct xg_graph {
  xg_value* values;
  size_t nvalues, values_cap;
  xg_node* nodes;
  size_t nnodes, nodes_cap;
  weight** consts; /* consts[0] is the reserved slot (NULL) */
  size_t nconsts, consts_cap;
  uint32_t input_ids[16], output_ids[16];
  int ninputs, noutputs;
  uint32_t num_inputs, num_externs, next_debug_handle;
  int failed;
} xg_graph;

/* num_inputs/num_outputs fix the external id ranges: inputs first, then outputs. */
void xg_init(xg_graph* g, uint32_t num_inputs, uint32_t num_outputs, uint32_t first_debug_handle);
void xg_free(xg_graph* g);

uint32_t xg_tensor(xg_graph* g, int16_t datatype, const uint32_t* dims, uint32_t ndims);
/* External input number k (external id k) / output number k (external id num_inputs + k). */
uint32_t xg_input(xg_graph* g, uint32_t k, int16_t datatype, const uint32_t* dims, uint32_t ndims);
uint32_t xg_output(xg_graph* g, uint32_t k, int16_t datatype, const uint32_t* dims, uint32_t ndims);
/* Constant fp32/fp16 tensor backed by a named weight. */
uint32_t xg_constant(xg_graph* g, weight* w, int16_t datatype, const uint32_t* dims, uint32_t ndims);
/* Per-channel quantized constant (qcint8/qcint4) whose scales are another named constant. */
uint32_t xg_constant_per_channel(xg_graph* g, weight* w, weight* scales, int16_t datatype, const uint32_t* dims,
                                 uint32_t ndims, int32_t channel_dim);
/* Blockwise qbint4 constant with bf16 scales, one per group_size inputs of each output channel. */
uint32_t xg_constant_blockwise(xg_graph* g, weight* w, weight* scales, const uint32_t* dims, int32_t group_size);
/* qdint8 activation quantized per token at run time (never constant). */
uint32_t xg_dynamic_quant(xg_graph* g, const uint32_t* dims, uint32_t ndims, int32_t num_nonbatch_dims);

xg_node* xg_node_add(xg_graph* g, uint8_t type);
void xg_node_1x1(xg_graph* g, uint8_t type, uint32_t in, uint32_t out, uint32_t flags);
void xg_node_2x1(xg_graph* g, uint8_t type, uint32_t a, uint32_t b, uint32_t out);
xg_node* xg_fully_connected(xg_graph* g, uint32_t in, uint32_t filter, uint32_t bias, uint32_t out);
void xg_transpose(xg_graph* g, const uint32_t* perm, uint32_t n, uint32_t in, uint32_t out);
void xg_reshape(xg_graph* g, const uint32_t* shape, uint32_t n, uint32_t in, uint32_t out);
typedef struct xg_conv_params {
  uint32_t pad_top, pad_right, pad_bottom, pad_left, kernel_h, kernel_w, stride_h, stride_w, dilation_h,
      dilation_w, group_in, group_out, groups, adjust_h, adjust_w;
} xg_conv_params;
xg_node* xg_conv(xg_graph* g, uint8_t type, const xg_conv_params* p, uint32_t in, uint32_t filter, uint32_t bias,
                 uint32_t out);
void xg_set_min_max(xg_node* n, float lo, float hi);

/* Serializes the delegate blob. Weights referenced by constants must be hashed. Caller frees. */
uint8_t* xg_blob(const xg_graph* g, size_t* size);

#endif
