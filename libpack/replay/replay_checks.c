/* Semantic checks of an XNNGraph that XNNPACK's define calls do not make but its packing and fusion rely
 * on: a graph that passes the flatbuffer reader can still ask XNNPACK to pack more channels than the
 * filter holds (a read past the weights) or carry value flags that make XNNPACK's fusion abort. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "loader/xnn_compat.h"
#include "replay/replay_internal.h"

/* A node's id fields: outputs are named "output...", everything else it reads. */
static int is_output_field(const xpack_et_xnn_field* f) { return strncmp(f->name, "output", 6) == 0; }

/* The value of a node's u32 or id field. */
static uint32_t field_u32(const xpack_et_xnn_node* n, const xpack_et_xnn_field* f) {
  uint32_t v;
  memcpy(&v, (const unsigned char*)n + f->offset, sizeof v);
  return v;
}

static const xpack_et_xnn_value* value_of(const xp_replay_state* s, uint32_t serialized) {
  return serialized == XNN_INVALID_VALUE_ID ? NULL : xpack_et_xnn_graph_find_value(s->graph, serialized);
}

static void mark_listed(xp_replay_state* s, const xpack_et_u32_array* ids, unsigned char bit) {
  for (uint32_t i = 0; i < ids->count; i++) {
    const xpack_et_xnn_value* v = value_of(s, ids->data[i]);
    if (v != NULL) s->value_use[v->index] |= bit;
  }
}

xpack_status xp_replay_find_value_uses(xp_replay_state* s, xpack_error* err) {
  const xpack_et_xnn_graph* g = s->graph;
  s->value_use = calloc(g->value_count + 1, 1);
  s->converted_from = calloc(g->value_count + 1, sizeof *s->converted_from);
  if (s->value_use == NULL || s->converted_from == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
  mark_listed(s, &g->input_ids, RP_VALUE_LISTED_INPUT);
  mark_listed(s, &g->output_ids, RP_VALUE_LISTED_OUTPUT);
  for (size_t i = 0; i < g->node_count; i++) {
    if (g->nodes[i].type == XPACK_ET_XNN_CONVERT) {
      const xpack_et_xnn_value* from = value_of(s, g->nodes[i].u.unary.input_id);
      const xpack_et_xnn_value* to = value_of(s, g->nodes[i].u.unary.output_id);
      if (from != NULL && to != NULL) s->converted_from[to->index] = from->datatype;
    }
    size_t count = 0;
    const xpack_et_xnn_field* fields = xpack_et_xnn_layout_fields(g->nodes[i].layout, &count);
    for (size_t k = 0; k < count; k++) {
      if (fields[k].kind != XPACK_ET_XNN_FIELD_ID || is_output_field(&fields[k])) continue;
      const xpack_et_xnn_value* v = value_of(s, field_u32(&g->nodes[i], &fields[k]));
      if (v != NULL) s->value_use[v->index] |= RP_VALUE_CONSUMED;
    }
  }
  return XPACK_OK;
}

/* ExecuTorch takes a delegate's inputs and outputs from the value flags; the graph's input_ids and
 * output_ids must say the same, or an output would silently become an internal tensor that nothing reads
 * (XNNPACK's fusion aborts on it). */
    xpack_status xp_replay_check_value(const xp_replay_state* s, const xpack_et_xnn_value* v, xpack_error* err) {
  const uint32_t known = XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT | XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
  if ((v->flags & ~known) != 0) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u: flags 0x%x has bits other than external input (1) and "
                   "external output (2)", s->graph->name, v->index, (unsigned)v->flags);
  }
  if (v->quant.kind == XPACK_ET_XNN_QUANT_PER_TOKEN_DYNAMIC && v->datatype != XPACK_ET_XNN_DT_QDINT8) {
    /* XNNPACK's define takes any datatype and then sizes the tensor from a table that has no entry for it. */
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u: per-token dynamic quantization of a %s tensor, "
                   "expected qdint8", s->graph->name, v->index, v->datatype_name);
  }
  if (v->num_dims <= XNN_MAX_TENSOR_DIMS &&
      xp_replay_tensor_bytes(v->dims, v->num_dims, v->datatype) > XP_REPLAY_MAX_TENSOR_BYTES) {
    /* Sized from wrapped products, XNNPACK and the run buffers would hold a few bytes of a tensor kernels
     * then read and write whole. */
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u (%s, %u dims): its dims give more than 2^47 bytes, "
                   "expected a tensor a process can hold", s->graph->name, v->index, v->datatype_name, v->num_dims);
  }
  const unsigned char use = s->value_use[v->index];
  const int input = (v->flags & XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT) != 0;
  const int output = (v->flags & XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_OUTPUT) != 0;
  if (input != ((use & RP_VALUE_LISTED_INPUT) != 0) || output != ((use & RP_VALUE_LISTED_OUTPUT) != 0)) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u: flags 0x%x but it is %sin input_ids and %sin output_ids "
                   "(external input is flag 1, external output flag 2)", s->graph->name, v->index,
                   (unsigned)v->flags, use & RP_VALUE_LISTED_INPUT ? "" : "not ",
                      use & RP_VALUE_LISTED_OUTPUT ? "" : "not ");
  }
  return XPACK_OK;
}

static int by_u32(const void* a, const void* b) {
  const uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
  return x < y ? -1 : x > y;
}

/* XNNPACK keeps an external value in the slot its external id names: a second value with the same id
 * replaces the first's definition under the nodes that use it, and XNNPACK 1adaa7c7's graph optimization
 * then never finished on such a graph (found by fuzz_replay). */
xpack_status xp_replay_check_external_ids(const xp_replay_state* s, xpack_error* err) {
  const xpack_et_xnn_graph* g = s->graph;
  const uint32_t external = XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT | XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
  uint32_t* ids = malloc((g->value_count + 1) * sizeof *ids);
  if (ids == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
  size_t n = 0;
  for (size_t i = 0; i < g->value_count; i++) {
    if (g->values[i].flags & external) ids[n++] = g->values[i].external_id;
  }
  qsort(ids, n, sizeof *ids, by_u32);
  for (size_t i = 1; i < n; i++) {
    if (ids[i] == ids[i - 1]) {
      const uint32_t id = ids[i];
      free(ids);
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: two external values have external_id %u, expected each "
                     "external value to have its own", g->name, (unsigned)id);
    }
  }
  free(ids);
  return XPACK_OK;
}

/* The product of a value's dims, saturated at 2^58: more elements than any file holds, and times 32 bits
 * it still fits. */
static uint64_t element_count(const xpack_et_xnn_value* v) {
  const uint64_t most = UINT64_MAX / 64;
  uint64_t numel = 1;
  for (uint32_t d = 0; d < v->num_dims; d++) {
    numel = v->dims[d] != 0 && numel > most / v->dims[d] ? most : numel * v->dims[d];
  }
  return numel;
}

/* XNNPACK reads a static value's whole tensor (dims x element size) from its constant when it packs or
 * copies it: a constant shorter than that is a read past the weights, into whatever the file holds next
 * or past its end. Longer is accepted (named data segments may be padded). */
xpack_status xp_replay_check_constant_size(const xp_replay_state* s, const xpack_et_xnn_value* v, size_t constant_size,
                                           xpack_error* err) {
  for (uint32_t d = 0; d < v->num_dims; d++) {
    /* A weight of no elements: XNNPACK reserves nothing for it and then pads a whole tile (a batch matrix
     * multiply's static operand wrote 128 bytes into a 0-byte block; found by fuzz_replay). */
    if (v->dims[d] == 0) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u: a constant with dims[%u] = 0, expected every dim of a "
                     "weight to be at least 1", s->graph->name, v->index, (unsigned)d);
    }
  }
  const uint64_t needed = xp_replay_tensor_bytes(v->dims, v->num_dims, v->datatype);
  if (constant_size < needed) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u: its constant has %zu bytes, its dims and datatype %s "
                   "need %" PRIu64, s->graph->name, v->index, constant_size, v->datatype_name, needed);
  }
  return XPACK_OK;
}

/* XNNPACK reads one bias element per output channel. */
static xpack_status check_bias(const xp_replay_state* s, const xpack_et_xnn_node* n, uint32_t bias_id, uint64_t channels,
                               xpack_error* err) {
  const xpack_et_xnn_value* b = value_of(s, bias_id);
  if (b == NULL) return XPACK_OK;
  const uint64_t numel = element_count(b);
  if (numel != channels) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): bias value %u has %" PRIu64
                   " elements, the node has %" PRIu64 " output channels", s->graph->name, n->index, n->type_name,
                   b->index, numel, channels);
  }
  return XPACK_OK;
}

/* Filter layout is OHWI for convolution and deconvolution ([groups x group_output_channels, kh, kw,
 * group_input_channels]) and 1HWO for depthwise ([1, kh, kw, groups x multiplier]); XNNPACK packs
 * exactly that many elements from the filter's bytes, so the node's arithmetic must match the dims. */
xpack_status xp_replay_check_conv(const xp_replay_state* s, const xpack_et_xnn_node* n, xpack_error* err) {
  const __typeof__(n->u.conv)* c = &n->u.conv;
  const uint64_t groups = c->groups, gic = c->group_input_channels, goc = c->group_output_channels;
  uint64_t expect[4];
  const char* layout;
  if (n->type == XPACK_ET_XNN_DEPTHWISE_CONV2D) {
    if (gic == 0 || goc % gic != 0) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): group_output_channels %" PRIu64
                     " is not a multiple of group_input_channels %" PRIu64, s->graph->name, n->index,
                     n->type_name, goc, gic);
    }
    expect[0] = 1, expect[1] = c->kernel_height, expect[2] = c->kernel_width, expect[3] = groups * (goc / gic);
    layout = "[1, kernel_height, kernel_width, groups x group_output_channels / group_input_channels]";
  } else {
    expect[0] = groups * goc, expect[1] = c->kernel_height, expect[2] = c->kernel_width, expect[3] = gic;
    layout = "[groups x group_output_channels, kernel_height, kernel_width, group_input_channels]";
  }
  const xpack_et_xnn_value* w = value_of(s, c->filter_id);
  if (w == NULL) return XPACK_OK; /* an undefined id is reported by the define step */
  int ok = w->num_dims == 4;
  for (uint32_t d = 0; ok && d < 4; d++) ok = w->dims[d] == expect[d];
  if (!ok) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): filter value %u has dims that do not match the "
                   "node's groups %" PRIu64 ", group_input_channels %" PRIu64 ", group_output_channels %" PRIu64
                   " and kernel %ux%u (expected %s)", s->graph->name, n->index, n->type_name, w->index, groups, gic,
                      goc, (unsigned)c->kernel_height, (unsigned)c->kernel_width, layout);
  }
  return check_bias(s, n, c->bias_id, n->type == XPACK_ET_XNN_DEPTHWISE_CONV2D ? expect[3] : expect[0], err);
}

/* The filter is [output_channels, input_channels], or [input_channels, output_channels] with
 * XNN_FLAG_TRANSPOSE_WEIGHTS; XNNPACK takes the channels from those two dims and reads that many bias
 * elements. */
xpack_status xp_replay_check_fully_connected(const xp_replay_state* s, const xpack_et_xnn_node* n, xpack_error* err) {
  const xpack_et_xnn_value* w = value_of(s, n->u.fully_connected.filter_id);
  if (w == NULL) return XPACK_OK;
  if (w->num_dims != 2) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): filter value %u has %u dims, expected 2",
                   s->graph->name, n->index, n->type_name, w->index, w->num_dims);
  }
  const int transposed = (n->u.fully_connected.flags & XNN_FLAG_TRANSPOSE_WEIGHTS) != 0;
  const uint32_t input_channels = transposed ? w->dims[0] : w->dims[1];
  const xpack_et_xnn_value* in = value_of(s, n->u.fully_connected.input1_id);
  /* XNNPACK's reshape divides the input's elements by the filter's input channels without checking the
   * remainder, and computes as many rows as that gives into an output sized from the input's dims. */
  if (in != NULL && (in->num_dims == 0 || in->dims[in->num_dims - 1] != input_channels)) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): input value %u's last dim is %u, the filter has %u "
                   "input channels", s->graph->name, n->index, n->type_name, in->index,
                   in->num_dims ? (unsigned)in->dims[in->num_dims - 1] : 0u, (unsigned)input_channels);
  }
  /* The same of the shape XNNPACK will give a computed input, where the replay follows it (replay_shapes.c). */
  const xp_replay_shape* real = xp_replay_shape_of(s, n->u.fully_connected.input1_id);
  if (in != NULL && real != NULL && (real->num_dims == 0 || real->dims[real->num_dims - 1] != input_channels)) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): input value %u's last dim is %u as XNNPACK computes "
                   "it (declared %u), the filter has %u input channels", s->graph->name, n->index, n->type_name,
                   in->index, real->num_dims ? (unsigned)real->dims[real->num_dims - 1] : 0u,
                   in->num_dims ? (unsigned)in->dims[in->num_dims - 1] : 0u, (unsigned)input_channels);
  }
  return check_bias(s, n, n->u.fully_connected.bias_id, transposed ? w->dims[1] : w->dims[0], err);
}

/* The datatype a dynamically quantized input starts from: XNNPACK fuses the convert that quantizes a
 * fully-connected or batch-matrix-multiply input into the node, which then quantizes the convert's own
 * input itself, reading it as the node's output type (fp32 for a qd8 x f32 node). A convert from any other
 * type makes it read past that input (bf16 read as fp32 twice over: found by fuzz_replay). Returns
 * XPACK_ET_XNN_DT_INVALID when the input is not quantized by a convert of this graph. */
static int dynamic_quant_source(const xp_replay_state* s, const xpack_et_xnn_value* in) {
  if (in->datatype == XPACK_ET_XNN_DT_FP32 && in->dq_datatype == XPACK_ET_XNN_DT_QINT8 &&
      (in->flags & XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT)) {
    return XPACK_ET_XNN_DT_FP32; /* the legacy marker: replay defines the convert from this fp32 input */
  }
  return in->datatype == XPACK_ET_XNN_DT_QDINT8 ? s->converted_from[in->index] : XPACK_ET_XNN_DT_INVALID;
}

xpack_status xp_replay_check_dynamic_quant(const xp_replay_state* s, const xpack_et_xnn_node* n, xpack_error* err) {
  uint32_t input_id, output_id;
  if (n->type == XPACK_ET_XNN_FULLY_CONNECTED) {
    input_id = n->u.fully_connected.input1_id, output_id = n->u.fully_connected.output_id;
  } else if (n->type == XPACK_ET_XNN_BATCH_MATRIX_MULTIPLY) {
    input_id = n->u.binary.input1_id, output_id = n->u.binary.output_id;
  } else {
    return XPACK_OK;
  }
  const xpack_et_xnn_value* in = value_of(s, input_id);
  const xpack_et_xnn_value* out = value_of(s, output_id);
  if (in == NULL || out == NULL) return XPACK_OK;
  const int source = dynamic_quant_source(s, in);
  if (source == XPACK_ET_XNN_DT_INVALID || source == out->datatype) return XPACK_OK;
  return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): input value %u is quantized at run time from %s, the "
                 "node's output value %u is %s (expected the same type: XNNPACK quantizes the input as the output "
                 "type)", s->graph->name, n->index, n->type_name, in->index, xpack_et_xnn_datatype_name(source),
                 out->index, out->datatype_name);
}

/* Node flags XNNPACK keeps for itself (across the XNNPACKs xpack builds with: squashed groups, inlined or
 * refused LHS packing, Slinky, no fusion): set from a file they make XNNPACK skip steps or take a packed
 * input type the graph never defined. 0x100 is also XNN_FLAG_MAYBE_PACK_FOR_QB4W_GEMM, which ExecuTorch sets
 * on Convert nodes. */
#define RP_INTERNAL_NODE_FLAGS 0xC0004300u
#define RP_SQUASH_GROUPS_OR_QB4W 0x100u
#define RP_FP32_STATIC_WEIGHTS 0x8u   /* XNN_FLAG_FP32_STATIC_WEIGHTS */
#define RP_FP32_STATIC_BIASES 0x80u   /* XNN_FLAG_FP32_STATIC_BIASES (XNN_FLAG_MAYBE_PACK_FOR_GEMM before) */

xpack_status xp_replay_check_flags(const xp_replay_state* s, const xpack_et_xnn_node* n, xpack_error* err) {
  size_t count = 0;
  const xpack_et_xnn_field* fields = xpack_et_xnn_layout_fields(n->layout, &count);
  uint32_t flags = 0;
  for (size_t k = 0; k < count; k++) {
    if (fields[k].kind == XPACK_ET_XNN_FIELD_U32 && strcmp(fields[k].name, "flags") == 0) flags = field_u32(n, &fields[k]);
  }
  uint32_t internal = flags & RP_INTERNAL_NODE_FLAGS;
  if (n->type != XPACK_ET_XNN_CONVERT) internal |= flags & RP_SQUASH_GROUPS_OR_QB4W;
  if (internal != 0) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): flags 0x%x has bits 0x%x that XNNPACK keeps for "
                   "itself", s->graph->name, n->index, n->type_name, (unsigned)flags, (unsigned)internal);
  }
  /* XNNPACK reads the static filter and bias as fp32 when these are set, whatever their datatype: an fp16
   * weight is then read twice over (found by fuzz_replay over 1adaa7c7). */
  xpack_et_xnn_weight_ids ids;
  if (!xpack_et_xnn_node_weight_ids(n, &ids)) return XPACK_OK;
  const xpack_et_xnn_value* filter = value_of(s, ids.filter);
  const xpack_et_xnn_value* bias = value_of(s, ids.bias);
  const xpack_et_xnn_value* wrong = (flags & RP_FP32_STATIC_WEIGHTS) && filter && filter->datatype != XPACK_ET_XNN_DT_FP32
                                        ? filter
                                    : (flags & RP_FP32_STATIC_BIASES) && bias && bias->datatype != XPACK_ET_XNN_DT_FP32
                                        ? bias
                                        : NULL;
  if (wrong != NULL) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): flags 0x%x say its static %s is fp32, value %u is %s",
                   s->graph->name, n->index, n->type_name, (unsigned)flags, wrong == filter ? "filter" : "bias",
                   wrong->index, wrong->datatype_name);
  }
  return XPACK_OK;
}

/* Nodes come in an order XNNPACK runs them in: every value a node reads is static, an external input or
 * written by an earlier node (XNNPACK's runtime creation fails on the others, and leaks doing so). Every
 * node output is an internal or external-output tensor that exactly one node writes and, unless it is an
 * external output, a node reads: XNNPACK plans one buffer per value from its single producer, so a second
 * producer, or a node writing into a static weight or an external input, makes it read and write past the
 * buffers it planned, and its fusion aborts on an internal value nothing reads. */
xpack_status xp_replay_check_node_ids(xp_replay_state* s, const xpack_et_xnn_node* n, xpack_error* err) {
  size_t count = 0;
  const xpack_et_xnn_field* fields = xpack_et_xnn_layout_fields(n->layout, &count);
  for (int outputs = 0; outputs < 2; outputs++) { /* inputs first: a node may not read its own output */
    for (size_t k = 0; k < count; k++) {
      if (fields[k].kind != XPACK_ET_XNN_FIELD_ID || is_output_field(&fields[k]) != outputs) continue;
      const xpack_et_xnn_value* v = value_of(s, field_u32(n, &fields[k]));
      if (v == NULL) continue; /* an undefined id is reported by the define step */
      const unsigned char use = s->value_use[v->index];
      const int is_static = v->constant_buffer_idx != 0;
      const int is_input = (v->flags & XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT) != 0;
      const char* wrong = NULL;
      if (!outputs) {
        wrong = is_static || is_input || (use & RP_VALUE_PRODUCED) ? NULL : "which no earlier node writes";
      } else {
        wrong = is_static                  ? "a static weight"
                : is_input                 ? "an external input"
                : use & RP_VALUE_PRODUCED  ? "already the output of another node"
                : !(use & RP_VALUE_CONSUMED) && !(v->flags & XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_OUTPUT)
                    ? "an internal value no node reads"
                    : NULL;
      }
      if (wrong != NULL) {
        return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): %s is value %u, %s", s->graph->name, n->index,
                       n->type_name, fields[k].name, v->index, wrong);
      }
      if (outputs) s->value_use[v->index] |= RP_VALUE_PRODUCED;
    }
  }
  return XPACK_OK;
}

/* An elementwise node (one input, one output: activations, conversions, copies) keeps its input's shape,
 * and the checks above read the declared dims of a node's inputs: a conversion whose output declares
 * other dims than its input would let a fully-connected node's declared input hide the channels XNNPACK's
 * reshape gives it (it computed more rows than the output holds: found by fuzz_replay). */
xpack_status xp_replay_check_elementwise(const xp_replay_state* s, const xpack_et_xnn_node* n, xpack_error* err) {
  if (n->layout != XPACK_ET_XNN_LAYOUT_UNARY || n->type == XPACK_ET_XNN_GLOBAL_AVG_POOLING_2D) return XPACK_OK;
  const xpack_et_xnn_value* in = value_of(s, n->u.unary.input_id);
  const xpack_et_xnn_value* out = value_of(s, n->u.unary.output_id);
  if (in == NULL || out == NULL) return XPACK_OK;
  int same = in->num_dims == out->num_dims;
  for (uint32_t d = 0; same && d < in->num_dims; d++) same = in->dims[d] == out->dims[d];
  if (!same) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): output value %u declares other dims than input "
                   "value %u (an elementwise node keeps the shape)", s->graph->name, n->index, n->type_name,
                   out->index, in->index);
  }
  return XPACK_OK;
}

xpack_status xpack_replay_check_externals(xnn_runtime_t runtime, const xpack_replay_subgraph* replay,
                                          xpack_error* err) {
  if (runtime == NULL || replay == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_replay_check_externals: %s is NULL",
                   runtime == NULL ? "the runtime" : "the replay");
  }
  for (uint32_t i = 0; i < replay->num_externals; i++) {
    const xpack_replay_external* e = &replay->externals[i];
    size_t dims[XNN_MAX_TENSOR_DIMS];
    size_t num_dims = 0;
    if (xnn_get_external_value_shape(runtime, e->id, &num_dims, dims) != xnn_status_success) {
      return xp_fail(err, XPACK_ERR_XNNPACK, "external value %u: XNNPACK reports no shape", (unsigned)e->id);
    }
    uint32_t shape[XNN_MAX_TENSOR_DIMS];
    int fits = num_dims <= XNN_MAX_TENSOR_DIMS;
    for (size_t d = 0; fits && d < num_dims; d++) {
      fits = dims[d] <= UINT32_MAX;
      shape[d] = (uint32_t)dims[d];
    }
    const uint64_t bytes = fits ? xp_replay_tensor_bytes(shape, (uint32_t)num_dims, e->datatype) : UINT64_MAX;
    if (bytes == UINT64_MAX) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "external %s value %u: its declared dims give %zu bytes, XNNPACK's "
                     "reshape gives more than 2^58 elements", e->is_input ? "input" : "output", (unsigned)e->id, e->bytes);
    }
    if (bytes != e->bytes) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "external %s value %u: its declared dims give %zu bytes, XNNPACK's "
                     "reshape gives %" PRIu64, e->is_input ? "input" : "output", (unsigned)e->id, e->bytes, bytes);
    }
  }
  return XPACK_OK;
}

xpack_status xp_replay_define_refusal(enum xnn_status refusal) {
  switch (refusal) {
    case xnn_status_invalid_parameter:
    case xnn_status_unsupported_parameter: return XPACK_ERR_BAD_INPUT;
    default: return xp_xnn_failure(refusal); /* out of memory, or XNNPACK's own failure */
  }
}
