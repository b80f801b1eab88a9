/* Names and node-table layouts of the XNNPACK delegate schema (EXECUTORCH_FORMAT.md section 3). */
#include <stddef.h>

#include "xpack_executorch.h"

static const char* const DATATYPE_NAMES[XPACK_ET_XNN_DT_COUNT] = {
    "invalid", "fp32",   "fp16",   "qint8", "quint8", "qint32", "qcint8", "qcint32",
    "qcint4",  "qdint8", "qbint4", "qpint8", "int32", "pfp32",  "bf16",
};

const char* xpack_et_xnn_datatype_name(int datatype) {
  if (datatype < 0 || datatype >= XPACK_ET_XNN_DT_COUNT) return "unknown";
  return DATATYPE_NAMES[datatype];
}

typedef struct node_type_info {
  const char* name;
  xpack_et_xnn_layout layout;
} node_type_info;

#define B XPACK_ET_XNN_LAYOUT_BINARY
#define U XPACK_ET_XNN_LAYOUT_UNARY
static const node_type_info NODE_TYPES[XPACK_ET_XNN_NODE_TYPE_MAX + 1] = {
    [1] = {"Add", B},
    [2] = {"FullyConnected", XPACK_ET_XNN_LAYOUT_FULLY_CONNECTED},
    [3] = {"Softmax", U},
    [4] = {"Sigmoid", U},
    [5] = {"StaticTranspose", XPACK_ET_XNN_LAYOUT_STATIC_TRANSPOSE},
    [6] = {"Clamp", U},
    [7] = {"Conv2d", XPACK_ET_XNN_LAYOUT_CONV},
    [8] = {"Div", B},
    [9] = {"StaticResizeBilinear2D", XPACK_ET_XNN_LAYOUT_STATIC_RESIZE_BILINEAR_2D},
    [10] = {"StaticConstantPad", XPACK_ET_XNN_LAYOUT_STATIC_CONSTANT_PAD},
    [11] = {"AvgPooling2d", XPACK_ET_XNN_LAYOUT_POOLING},
    [12] = {"Minimum", B},
    [13] = {"DepthwiseConv2d", XPACK_ET_XNN_LAYOUT_CONV},
    [14] = {"MaxPooling2d", XPACK_ET_XNN_LAYOUT_POOLING},
    [15] = {"Multiply", B},
    [16] = {"Subtract", B},
    [17] = {"Floor", U},
    [18] = {"Convert", U},
    [19] = {"GlobalAvgPooling2d", U},
    [20] = {"StaticReshape", XPACK_ET_XNN_LAYOUT_STATIC_RESHAPE},
    [21] = {"ArgMaxPooling2d", XPACK_ET_XNN_LAYOUT_ARGMAX_POOLING},
    [22] = {"SquareRoot", U},
    [23] = {"Ceiling", U},
    [24] = {"Hardswish", U},
    [25] = {"LeakyReLU", XPACK_ET_XNN_LAYOUT_LEAKY_RELU},
    [26] = {"Maximum", B},
    [27] = {"Negate", U},
    [28] = {"Square", U},
    [29] = {"ELU", XPACK_ET_XNN_LAYOUT_ELU},
    [30] = {"Abs", U},
    [31] = {"PReLU", B},
    [32] = {"Concatenate2", XPACK_ET_XNN_LAYOUT_CONCATENATE},
    [33] = {"Concatenate3", XPACK_ET_XNN_LAYOUT_CONCATENATE},
    [34] = {"Concatenate4", XPACK_ET_XNN_LAYOUT_CONCATENATE},
    [35] = {"StaticSlice", XPACK_ET_XNN_LAYOUT_STATIC_SLICE},
    [36] = {"ScaledDotProductAttention", XPACK_ET_XNN_LAYOUT_SDPA},
    [37] = {"BatchMatrixMultiply", B},
    [38] = {"Concatenate5", XPACK_ET_XNN_LAYOUT_CONCATENATE},
    [39] = {"ConvTranspose2d", XPACK_ET_XNN_LAYOUT_CONV},
    [40] = {"ReciprocalSquareRoot", U},
    [41] = {"Log", U},
    [42] = {"Gelu", U},
    [43] = {"Tanh", U},
    [44] = {"Exp", U},
    [45] = {"Sin", U},
    [46] = {"Copy", U},
    [47] = {"Cos", U},
};
#undef B
#undef U

const char* xpack_et_xnn_node_type_name(int type) {
  if (type < 1 || type > XPACK_ET_XNN_NODE_TYPE_MAX) return "unknown";
  return NODE_TYPES[type].name;
}

xpack_et_xnn_layout xpack_et_xnn_node_layout(int type) {
  if (type < 1 || type > XPACK_ET_XNN_NODE_TYPE_MAX) return 0;
  return NODE_TYPES[type].layout;
}

/* Field lists in flatbuffer id order: the position in the array is the field id. */
#define NAMED(name, kind, member) {name, XPACK_ET_XNN_FIELD_##kind, offsetof(xpack_et_xnn_node, member)}

static const xpack_et_xnn_field BINARY[] = {
    NAMED("input1_id", ID, u.binary.input1_id), NAMED("input2_id", ID, u.binary.input2_id),
    NAMED("output_id", ID, u.binary.output_id), NAMED("flags", U32, u.binary.flags)};
static const xpack_et_xnn_field UNARY[] = {NAMED("input_id", ID, u.unary.input_id),
                                           NAMED("output_id", ID, u.unary.output_id), NAMED("flags", U32, u.unary.flags)};
static const xpack_et_xnn_field FULLY_CONNECTED[] = {
    NAMED("input1_id", ID, u.fully_connected.input1_id), NAMED("filter_id", ID, u.fully_connected.filter_id),
    NAMED("bias_id", ID, u.fully_connected.bias_id), NAMED("output_id", ID, u.fully_connected.output_id),
    NAMED("flags", U32, u.fully_connected.flags)};
static const xpack_et_xnn_field CONV[] = {
    NAMED("padding_top", U32, u.conv.padding_top), NAMED("padding_right", U32, u.conv.padding_right),
    NAMED("padding_bottom", U32, u.conv.padding_bottom), NAMED("padding_left", U32, u.conv.padding_left),
    NAMED("kernel_height", U32, u.conv.kernel_height), NAMED("kernel_width", U32, u.conv.kernel_width),
    NAMED("subsampling_height", U32, u.conv.subsampling_height),
    NAMED("subsampling_width", U32, u.conv.subsampling_width), NAMED("dilation_height", U32, u.conv.dilation_height),
    NAMED("dilation_width", U32, u.conv.dilation_width),
    NAMED("group_input_channels", U32, u.conv.group_input_channels),
    NAMED("group_output_channels", U32, u.conv.group_output_channels), NAMED("groups", U32, u.conv.groups),
    NAMED("adjustment_height", U32, u.conv.adjustment_height), NAMED("adjustment_width", U32, u.conv.adjustment_width),
    NAMED("input1_id", ID, u.conv.input1_id), NAMED("filter_id", ID, u.conv.filter_id),
    NAMED("bias_id", ID, u.conv.bias_id), NAMED("output_id", ID, u.conv.output_id), NAMED("flags", U32, u.conv.flags)};
static const xpack_et_xnn_field POOLING[] = {
    NAMED("padding_top", U32, u.pooling.padding_top), NAMED("padding_right", U32, u.pooling.padding_right),
    NAMED("padding_bottom", U32, u.pooling.padding_bottom), NAMED("padding_left", U32, u.pooling.padding_left),
    NAMED("pooling_height", U32, u.pooling.pooling_height), NAMED("pooling_width", U32, u.pooling.pooling_width),
    NAMED("stride_height", U32, u.pooling.stride_height), NAMED("stride_width", U32, u.pooling.stride_width),
    NAMED("dilation_height", U32, u.pooling.dilation_height), NAMED("dilation_width", U32, u.pooling.dilation_width),
    NAMED("input_id", ID, u.pooling.input_id), NAMED("output_id", ID, u.pooling.output_id),
    NAMED("flags", U32, u.pooling.flags)};
static const xpack_et_xnn_field CONCATENATE[] = {
    NAMED("axis", U32, u.concatenate.axis), NAMED("input1_id", ID, u.concatenate.input1_id),
    NAMED("input2_id", ID, u.concatenate.input2_id), NAMED("input3_id", ID, u.concatenate.input3_id),
    NAMED("input4_id", ID, u.concatenate.input4_id), NAMED("output_id", ID, u.concatenate.output_id),
    NAMED("flags", U32, u.concatenate.flags), NAMED("input5_id", ID, u.concatenate.input5_id)};
static const xpack_et_xnn_field TRANSPOSE[] = {
    NAMED("num_dims", U32, u.transpose.num_dims), NAMED("perm", U32_ARRAY, u.transpose.perm),
    NAMED("input_id", ID, u.transpose.input_id), NAMED("output_id", ID, u.transpose.output_id),
    NAMED("flags", U32, u.transpose.flags)};
static const xpack_et_xnn_field RESIZE[] = {
    NAMED("new_height", U32, u.resize_bilinear.new_height), NAMED("new_width", U32, u.resize_bilinear.new_width),
    NAMED("input_id", ID, u.resize_bilinear.input_id), NAMED("output_id", ID, u.resize_bilinear.output_id),
    NAMED("flags", U32, u.resize_bilinear.flags)};
static const xpack_et_xnn_field CONSTANT_PAD[] = {
    NAMED("pre_paddings", U32_ARRAY, u.constant_pad.pre_paddings),
    NAMED("post_paddings", U32_ARRAY, u.constant_pad.post_paddings),
    NAMED("padding_value", F32, u.constant_pad.padding_value), NAMED("input_id", ID, u.constant_pad.input_id),
    NAMED("output_id", ID, u.constant_pad.output_id), NAMED("flags", U32, u.constant_pad.flags)};
static const xpack_et_xnn_field RESHAPE[] = {
    NAMED("num_dims", U32, u.reshape.num_dims), NAMED("new_shape", U32_ARRAY, u.reshape.new_shape),
    NAMED("input_id", ID, u.reshape.input_id), NAMED("output_id", ID, u.reshape.output_id),
    NAMED("flags", U32, u.reshape.flags)};
static const xpack_et_xnn_field SLICE[] = {
    NAMED("num_dims", U32, u.slice.num_dims), NAMED("offsets", U32_ARRAY, u.slice.offsets),
    NAMED("sizes", U32_ARRAY, u.slice.sizes), NAMED("input_id", ID, u.slice.input_id),
    NAMED("output_id", ID, u.slice.output_id), NAMED("flags", U32, u.slice.flags)};
static const xpack_et_xnn_field ELU[] = {NAMED("alpha", F32, u.elu.alpha), NAMED("input_id", ID, u.elu.input_id),
                                         NAMED("output_id", ID, u.elu.output_id), NAMED("flags", U32, u.elu.flags)};
static const xpack_et_xnn_field LEAKY_RELU[] = {
    NAMED("negative_slope", F32, u.leaky_relu.negative_slope), NAMED("input_id", ID, u.leaky_relu.input_id),
    NAMED("output_id", ID, u.leaky_relu.output_id), NAMED("flags", U32, u.leaky_relu.flags)};
static const xpack_et_xnn_field ARGMAX_POOLING[] = {
    NAMED("padding_top", U32, u.argmax_pooling.padding_top),
    NAMED("padding_right", U32, u.argmax_pooling.padding_right),
    NAMED("padding_bottom", U32, u.argmax_pooling.padding_bottom),
    NAMED("padding_left", U32, u.argmax_pooling.padding_left),
    NAMED("pooling_height", U32, u.argmax_pooling.pooling_height),
    NAMED("pooling_width", U32, u.argmax_pooling.pooling_width), NAMED("input_id", ID, u.argmax_pooling.input_id),
    NAMED("output_value_id", ID, u.argmax_pooling.output_value_id),
    NAMED("output_index_id", ID, u.argmax_pooling.output_index_id), NAMED("flags", U32, u.argmax_pooling.flags)};
static const xpack_et_xnn_field SDPA[] = {
    NAMED("query_id", ID, u.sdpa.query_id), NAMED("key_id", ID, u.sdpa.key_id),
    NAMED("value_id", ID, u.sdpa.value_id), NAMED("scale_id", ID, u.sdpa.scale_id),
    NAMED("mask_id", ID, u.sdpa.mask_id), NAMED("output_id", ID, u.sdpa.output_id), NAMED("flags", U32, u.sdpa.flags)};
#undef NAMED

const xpack_et_xnn_field* xpack_et_xnn_layout_fields(xpack_et_xnn_layout layout, size_t* count) {
  const xpack_et_xnn_field* f = NULL;
  size_t n = 0;
  switch (layout) {
#define CASE(l, a) \
  case l:          \
    f = a;         \
    n = sizeof(a) / sizeof((a)[0]); \
    break;
    CASE(XPACK_ET_XNN_LAYOUT_BINARY, BINARY)
    CASE(XPACK_ET_XNN_LAYOUT_UNARY, UNARY)
    CASE(XPACK_ET_XNN_LAYOUT_FULLY_CONNECTED, FULLY_CONNECTED)
    CASE(XPACK_ET_XNN_LAYOUT_CONV, CONV)
    CASE(XPACK_ET_XNN_LAYOUT_POOLING, POOLING)
    CASE(XPACK_ET_XNN_LAYOUT_CONCATENATE, CONCATENATE)
    CASE(XPACK_ET_XNN_LAYOUT_STATIC_TRANSPOSE, TRANSPOSE)
    CASE(XPACK_ET_XNN_LAYOUT_STATIC_RESIZE_BILINEAR_2D, RESIZE)
    CASE(XPACK_ET_XNN_LAYOUT_STATIC_CONSTANT_PAD, CONSTANT_PAD)
    CASE(XPACK_ET_XNN_LAYOUT_STATIC_RESHAPE, RESHAPE)
    CASE(XPACK_ET_XNN_LAYOUT_STATIC_SLICE, SLICE)
    CASE(XPACK_ET_XNN_LAYOUT_ELU, ELU)
    CASE(XPACK_ET_XNN_LAYOUT_LEAKY_RELU, LEAKY_RELU)
    CASE(XPACK_ET_XNN_LAYOUT_ARGMAX_POOLING, ARGMAX_POOLING)
    CASE(XPACK_ET_XNN_LAYOUT_SDPA, SDPA)
#undef CASE
  }
  if (count) *count = n;
  return f;
}

bool xpack_et_xnn_node_weight_ids(const xpack_et_xnn_node* node, xpack_et_xnn_weight_ids* ids) {
  if (node->layout == XPACK_ET_XNN_LAYOUT_FULLY_CONNECTED) {
    const __typeof__(node->u.fully_connected)* f = &node->u.fully_connected;
    *ids = (xpack_et_xnn_weight_ids){f->input1_id, f->filter_id, f->bias_id, f->output_id};
    return true;
  }
  if (node->layout == XPACK_ET_XNN_LAYOUT_CONV) {
    const __typeof__(node->u.conv)* c = &node->u.conv;
    *ids = (xpack_et_xnn_weight_ids){c->input1_id, c->filter_id, c->bias_id, c->output_id};
    return true;
  }
  return false;
}
