/* Two-byte changes to generated programs that once crashed pack or run while the reader called them
 * replayable (issue 16): each is made to the parsed graph, and the replay must now refuse it with
 * XPACK_ERR_BAD_INPUT before XNNPACK packs or writes anything; a node XNNPACK itself refuses to define is
 * bad input too.
 * Usage: hostile_graphs CONV.pte DECONV.pte FC.pte DQ.pte BMM.pte Q4.pte (FC: fully-connected nodes with bias,
 * xpack-genmodel fp16; DQ: dynamically quantized values, qd8-qc8w; BMM: a static batch matrix multiply operand;
 * Q4: qcint4 and qbint4 weights, llm-q4) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnnpack.h>

#include "xpack.h"
#include "xpack_executorch.h"
#include "xpack_replay.h"
#include "expect.h"


typedef struct opened {
  xpack_et_program* program;
  xpack_et_xnn_graph* graph;
} opened;

static int open_graph(const char* path, opened* o) {
  xpack_error err;
  if (xpack_et_program_open(path, &o->program, &err) != XPACK_OK ||
      xpack_et_xnn_graph_open(o->program, 0, 0, &o->graph, &err) != XPACK_OK) {
    fprintf(stderr, "%s\n", err.message);
    return -1;
  }
  return 0;
}

static void close_graph(opened* o) {
  xpack_et_xnn_graph_free(o->graph);
  xpack_et_program_close(o->program);
}

static xpack_status define(opened* o, xpack_replay_subgraph* replay, xpack_error* err) {
  xpack_et_named_sources none;
  memset(&none, 0, sizeof none);
  none.program = o->program;
  return xpack_replay_define(o->graph, &none, NULL, NULL, replay, err);
}

/* The changed graph must be refused at definition, with `needle` in the message. */
static void expect_refused(opened* o, const char* needle, const char* what) {
  xpack_replay_subgraph replay;
  xpack_error err;
  xpack_status st = define(o, &replay, &err);
  EXPECT_MSG(st == XPACK_ERR_BAD_INPUT && strstr(err.message, needle) != NULL, "%s: %s %s", what, xpack_status_name(st),
        st ? err.message : "defined");
  if (st == XPACK_OK) xpack_replay_release(&replay);
}

/* group_output_channels 1 -> 3516 on the depthwise convolution: XNNPACK packed 3516x the filter. */
static void depthwise_channels(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_node* dw = NULL;
  for (size_t i = 0; i < o.graph->node_count; i++) {
    if (o.graph->nodes[i].type == XPACK_ET_XNN_DEPTHWISE_CONV2D) dw = (xpack_et_xnn_node*)&o.graph->nodes[i];
  }
  EXPECT_MSG(dw != NULL, "%s: no depthwise convolution", path);
  if (dw) {
    dw->u.conv.group_output_channels = 3516;
    expect_refused(&o, "filter value", "depthwise group_output_channels 3516");
  }
  close_graph(&o);
}

/* The graph's last external output, writable: the tests change the parsed graph in place. */
static xpack_et_xnn_value* external_output(opened* o) {
  xpack_et_xnn_value* out = NULL;
  for (size_t i = 0; i < o->graph->value_count; i++) {
    if (o->graph->values[i].flags == XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_OUTPUT) out = (xpack_et_xnn_value*)&o->graph->values[i];
  }
  return out;
}

/* A value's flags 2 -> 8: an output that is no longer external made XNNPACK's fusion abort. */
static void value_flags(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_value* out = external_output(&o);
  EXPECT_MSG(out != NULL, "%s: no external output", path);
  if (out) {
    out->flags = 8;
    expect_refused(&o, "flags 0x8", "value flags 8");
  }
  close_graph(&o);
}

/* Flags 2 -> 0: the output silently became internal; XNNPACK's fusion aborted on a value nothing reads.
 * Refused while output_ids still lists it, and once output_ids drops it too. */
static void output_dropped(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_value* out = external_output(&o);
  EXPECT_MSG(out != NULL && o.graph->output_ids.count == 1, "%s: expected one external output", path);
  if (out && o.graph->output_ids.count == 1) {
    out->flags = 0;
    expect_refused(&o, "in output_ids", "output flags 2 -> 0");
    ((xpack_et_xnn_graph*)o.graph)->output_ids.count = 0;
    expect_refused(&o, "an internal value no node reads", "output flags 2 -> 0, not in output_ids");
  }
  close_graph(&o);
}

/* The first node of `type`, writable. */
static xpack_et_xnn_node* node_of_type(opened* o, int type) {
  for (size_t i = 0; i < o->graph->node_count; i++) {
    if (o->graph->nodes[i].type == type) return (xpack_et_xnn_node*)&o->graph->nodes[i];
  }
  return NULL;
}

/* The first node reading the convolution's output, written only later: XNNPACK's runtime creation failed
 * (and leaked) on a value read before any node writes it (found by fuzz_replay). */
static void reads_later_output(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_node* conv = node_of_type(&o, XPACK_ET_XNN_CONV2D);
  xpack_et_xnn_node* first = (xpack_et_xnn_node*)&o.graph->nodes[0];
  EXPECT_MSG(conv != NULL && conv != first && first->layout == XPACK_ET_XNN_LAYOUT_STATIC_TRANSPOSE,
        "%s: expected a transpose before the convolution", path);
  if (conv && conv != first && first->layout == XPACK_ET_XNN_LAYOUT_STATIC_TRANSPOSE) {
    first->u.transpose.input_id = conv->u.conv.output_id;
    expect_refused(&o, "which no earlier node writes", "node 0 reading the convolution's output");
  }
  close_graph(&o);
}

/* A convolution's output id -> its own filter's: XNNPACK would write into the program's weights. */
static void output_into_weight(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_node* conv = node_of_type(&o, XPACK_ET_XNN_CONV2D);
  EXPECT_MSG(conv != NULL, "%s: no convolution", path);
  if (conv) {
    conv->u.conv.output_id = conv->u.conv.filter_id;
    expect_refused(&o, "a static weight", "convolution output_id = its filter");
  }
  close_graph(&o);
}

/* A qdint8 value's datatype -> qpint8: XNNPACK's define of a dynamically quantized tensor read its size
 * from outside a table (found by fuzz_replay). */
static void dynamic_datatype(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_value* dq = NULL;
  for (size_t i = 0; i < o.graph->value_count; i++) {
    if (o.graph->values[i].quant.kind == XPACK_ET_XNN_QUANT_PER_TOKEN_DYNAMIC) dq = (xpack_et_xnn_value*)&o.graph->values[i];
  }
  EXPECT_MSG(dq != NULL, "%s: no dynamically quantized value", path);
  if (dq) {
    dq->datatype = XPACK_ET_XNN_DT_QPINT8;
    expect_refused(&o, "expected qdint8", "dynamic quantization of qpint8");
  }
  close_graph(&o);
}

/* The program's input last dim changed but not the dims its Convert declares for the qdint8 value the
 * fully-connected node reads: XNNPACK's reshape gave that node more rows than its output holds (SEGV in the
 * qd8 GEMM, found by fuzz_replay). */
static void convert_dims(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_node* convert = node_of_type(&o, XPACK_ET_XNN_CONVERT);
  const xpack_et_xnn_value* in = convert ? xpack_et_xnn_graph_find_value(o.graph, convert->u.unary.input_id) : NULL;
  EXPECT_MSG(in != NULL && in->num_dims > 0, "%s: no convert node with a shaped input", path);
  if (in && in->num_dims > 0) {
    ((uint32_t*)in->dims)[in->num_dims - 1] += 1;
    expect_refused(&o, "declares other dims", "convert input's last dim + 1");
  }
  close_graph(&o);
}

/* The program's fp32 input, which a Convert quantizes for a fully-connected node, made bf16: XNNPACK fused
 * the Convert into the node, which read the bf16 input as fp32, twice its size (SEGV in f32 rminmax, found
 * by fuzz_replay). */
static void convert_source(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_node* convert = node_of_type(&o, XPACK_ET_XNN_CONVERT);
  xpack_et_xnn_value* in = convert ? (xpack_et_xnn_value*)xpack_et_xnn_graph_find_value(o.graph, convert->u.unary.input_id) : NULL;
  EXPECT_MSG(in != NULL && in->datatype == XPACK_ET_XNN_DT_FP32, "%s: no convert node with an fp32 input", path);
  if (in && in->datatype == XPACK_ET_XNN_DT_FP32) {
    in->datatype = XPACK_ET_XNN_DT_BF16;
    in->datatype_name = xpack_et_xnn_datatype_name(in->datatype);
    expect_refused(&o, "quantized at run time from bf16", "convert input fp32 -> bf16");
  }
  close_graph(&o);
}

/* Flags a file may not set on a fully-connected node of fp16 weights: XNN_FLAG_FP32_STATIC_WEIGHTS made
 * XNNPACK read the fp16 filter and bias as fp32, past their end (SEGV in copy_bias, found by fuzz_replay
 * over 1adaa7c7), and XNN_FLAG_INLINE_LHS_PACKING is XNNPACK's own mark of a node whose input it packs. */
static void node_flags(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_node* fc = node_of_type(&o, XPACK_ET_XNN_FULLY_CONNECTED);
  const xpack_et_xnn_value* w = fc ? xpack_et_xnn_graph_find_value(o.graph, fc->u.fully_connected.filter_id) : NULL;
  EXPECT_MSG(w != NULL && w->datatype == XPACK_ET_XNN_DT_FP16, "%s: no fully-connected node with an fp16 filter", path);
  if (w && w->datatype == XPACK_ET_XNN_DT_FP16) {
    const uint32_t flags = fc->u.fully_connected.flags;
    fc->u.fully_connected.flags = flags | 0x8u;
    expect_refused(&o, "say its static filter is fp32", "fully-connected flags | XNN_FLAG_FP32_STATIC_WEIGHTS");
    fc->u.fully_connected.flags = flags | 0x200u;
    expect_refused(&o, "that XNNPACK keeps for itself", "fully-connected flags | XNN_FLAG_INLINE_LHS_PACKING");
  }
  close_graph(&o);
}

/* An external output given the external id of the external input: XNNPACK keeps external values in the slot
 * their id names, so the output replaced the input's definition, and 1adaa7c7's graph optimization never
 * finished (found by fuzz_replay). */
static void external_ids(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_value* out = external_output(&o);
  const xpack_et_xnn_value* in = NULL;
  for (size_t i = 0; i < o.graph->value_count && in == NULL; i++) {
    if (o.graph->values[i].flags & XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT) in = &o.graph->values[i];
  }
  EXPECT_MSG(out != NULL && in != NULL, "%s: expected an external input and an external output", path);
  if (out && in) {
    out->external_id = in->external_id;
    expect_refused(&o, "two external values have external_id", "external output's id = the input's");
  }
  close_graph(&o);
}

/* A deconvolution's padding_right above its output width: XNNPACK's indirection set-up wrote out of bounds
 * in reshape (found by fuzz_replay). */
static void deconv_padding(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_node* deconv = node_of_type(&o, XPACK_ET_XNN_CONV_TRANSPOSE2D);
  EXPECT_MSG(deconv != NULL, "%s: no deconvolution", path);
  if (deconv) {
    deconv->u.conv.padding_right = 22906;
    expect_refused(&o, "leaves no output", "deconvolution padding_right 22906");
  }
  close_graph(&o);
}

/* The same through a value a node computes: a transpose's output declared 26,214 wide while XNNPACK makes it as
 * wide as the program's input, and a padding the declared width allows but the real one does not (found by
 * fuzz_replay: XNNPACK 4ea82e5 wrote past its indirection buffer in reshape). The check goes by the width
 * XNNPACK will use. */
static void deconv_declared_width(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_node* deconv = node_of_type(&o, XPACK_ET_XNN_CONV_TRANSPOSE2D);
  const xpack_et_xnn_value* in = deconv ? xpack_et_xnn_graph_find_value(o.graph, deconv->u.conv.input1_id) : NULL;
  EXPECT_MSG(in != NULL && in->num_dims == 4 && !(in->flags & XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT),
             "%s: expected a deconvolution reading a computed 4-D value", path);
  if (in && in->num_dims == 4) {
    const uint32_t real_width = in->dims[2];
    ((uint32_t*)in->dims)[2] = 26214;
    /* The full output of the real width, all of it padded away; the declared width leaves plenty. */
    deconv->u.conv.padding_left = deconv->u.conv.subsampling_width * (real_width - 1) + deconv->u.conv.adjustment_width +
                                  deconv->u.conv.kernel_width - deconv->u.conv.padding_right;
    expect_refused(&o, "leaves no output (its input's width is", "a deconvolution's computed input declared wider");
  }
  close_graph(&o);
}

/* A static reshape's new shape made one wider in its last dim, the value it writes still declared as before: the
 * fully-connected layer reading it would get more input channels than its filter has, which XNNPACK does not
 * check. Refused by the shape XNNPACK computes, not the declared one. */
static void fully_connected_computed_input(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_node* reshape = node_of_type(&o, XPACK_ET_XNN_STATIC_RESHAPE);
  EXPECT_MSG(reshape != NULL && reshape->u.reshape.new_shape.count > 0, "%s: no static reshape", path);
  if (reshape && reshape->u.reshape.new_shape.count > 0) {
    ((uint32_t*)reshape->u.reshape.new_shape.data)[reshape->u.reshape.new_shape.count - 1] += 1;
    expect_refused(&o, "as XNNPACK computes it (declared", "a reshape's new shape one wider than its output declares");
  }
  close_graph(&o);
}

/* Fully-connected flags 0 -> 1 (XNN_FLAG_TRANSPOSE_WEIGHTS) on a non-square filter: XNNPACK took the
 * channels from the other dims and read the bias past its end (found by fuzz_replay); the input's channels
 * no longer match either. A filter dim doubled: XNNPACK packed twice the constant's bytes. The input's last
 * dim changed: XNNPACK computed more rows than the output holds (found by fuzz_replay). */
static void fully_connected(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_node* fc = NULL;
  const xpack_et_xnn_value* w = NULL;
  for (size_t i = 0; i < o.graph->node_count && w == NULL; i++) {
    xpack_et_xnn_node* n = (xpack_et_xnn_node*)&o.graph->nodes[i];
    const xpack_et_xnn_value* f = n->type == XPACK_ET_XNN_FULLY_CONNECTED && n->u.fully_connected.bias_id !=
        XPACK_ET_XNN_INVALID_ID ? xpack_et_xnn_graph_find_value(o.graph, n->u.fully_connected.filter_id) : NULL;
    if (f && f->num_dims == 2 && f->dims[0] != f->dims[1] && f->constant_buffer_idx != 0) fc = n, w = f;
  }
  EXPECT_MSG(fc != NULL, "%s: no fully-connected node with a bias and a static non-square filter", path);
  if (fc) {
    fc->u.fully_connected.flags = 1;
    expect_refused(&o, "input channels", "fully-connected transposed weights");
    fc->u.fully_connected.flags = 0;
    const xpack_et_xnn_value* in = xpack_et_xnn_graph_find_value(o.graph, fc->u.fully_connected.input1_id);
    uint32_t* last = (uint32_t*)&in->dims[in->num_dims - 1];
    *last += 1;
    expect_refused(&o, "input channels", "fully-connected input's last dim + 1");
    *last -= 1;
    ((uint32_t*)w->dims)[0] *= 2;
    expect_refused(&o, "its constant has", "fully-connected filter dim doubled");
  }
  close_graph(&o);
}

/* The output's datatype fp32 -> int32: XNNPACK refuses to define the node that writes it ("datatype
 * invalid"). That is the file's graph, so bad input naming the node, not an XNNPACK failure (exit 4). */
static void output_datatype(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_value* out = external_output(&o);
  EXPECT_MSG(out != NULL, "%s: no external output", path);
  if (out) {
    out->datatype = XPACK_ET_XNN_DT_INT32;
    out->datatype_name = "int32";
    expect_refused(&o, "): XNNPACK refused to define it", "output datatype int32");
  }
  close_graph(&o);
}

/* An output's declared dims 16 -> 1: run sized the buffer from them and XNNPACK wrote past it. */
static void output_dims(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_value* out = external_output(&o);
  uint32_t dims[8];
  uint32_t changed = 0;
  for (uint32_t d = 0; out && d < out->num_dims && d < 8; d++) {
    dims[d] = out->dims[d];
    if (!changed && dims[d] > 1) changed = dims[d], dims[d] = 1;
  }
  EXPECT_MSG(out != NULL && changed > 1, "%s: no external output with a dim above 1", path);
  if (out && changed > 1) {
    out->dims = dims;
    xpack_replay_subgraph replay;
    xpack_error err;
    xpack_status st = define(&o, &replay, &err);
    xnn_runtime_t runtime = NULL;
    if (st == XPACK_OK && xnn_create_runtime_v4(replay.subgraph, NULL, NULL, NULL, 0, &runtime) == xnn_status_success) {
      if (xnn_reshape_runtime(runtime) == xnn_status_success) {
        st = xpack_replay_check_externals(runtime, &replay, &err);
        EXPECT_MSG(st == XPACK_ERR_BAD_INPUT && strstr(err.message, "reshape gives") != NULL, "dims %u -> 1: %s %s",
              (unsigned)changed, xpack_status_name(st), st ? err.message : "accepted");
      }
      xnn_delete_runtime(runtime);
    }
    if (replay.subgraph || replay.externals) xpack_replay_release(&replay);
  }
  close_graph(&o);
}

/* A batch matrix multiply's static operand with a dim of 0: XNNPACK reserved nothing for it and padded a whole
 * tile into the empty block (heap overflow, found by fuzz_replay). */
static void empty_weight(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_value* w = NULL;
  for (size_t i = 0; i < o.graph->value_count && w == NULL; i++) {
    xpack_et_xnn_value* v = (xpack_et_xnn_value*)&o.graph->values[i];
    if (v->constant_buffer_idx != 0 && v->num_dims > 0) w = v;
  }
  EXPECT_MSG(w != NULL, "%s: no static value", path);
  if (w) {
    ((uint32_t*)w->dims)[0] = 0;
    expect_refused(&o, "expected every dim of a weight to be at least 1", "a static operand's dims[0] = 0");
  }
  close_graph(&o);
}

/* A fully-connected filter whose constant has 0 bytes (its data NULL): once defined without data, a dynamic value
 * nothing writes, packed from whatever XNNPACK found there; with a dim of 0 as well, XNNPACK's reshape divided
 * by zero (SIGFPE in `xpack run`, found by a review on 2026-11-28). */
static void zero_byte_weight(const char* path, int zero_dim) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  const xpack_et_xnn_value* w = NULL;
  for (size_t i = 0; i < o.graph->node_count && w == NULL; i++) {
    xpack_et_xnn_weight_ids ids;
    if (xpack_et_xnn_node_weight_ids(&o.graph->nodes[i], &ids)) w = xpack_et_xnn_graph_find_value(o.graph, ids.filter);
  }
  EXPECT_MSG(w != NULL && w->constant_buffer_idx != 0 && o.graph->has_header, "%s: no static filter in an XH00 blob",
             path);
  if (w && w->constant_buffer_idx != 0 && o.graph->has_header) {
    xpack_et_xnn_constant_entry* e = (xpack_et_xnn_constant_entry*)&o.graph->constant_entries[w->constant_buffer_idx];
    *e = (xpack_et_xnn_constant_entry){0, 0, NULL, 0}; /* in the blob, 0 bytes */
    if (zero_dim) ((uint32_t*)w->dims)[w->num_dims - 1] = 0;
    expect_refused(&o, zero_dim ? "expected every dim of a weight to be at least 1" : "its constant has 0 bytes",
                   zero_dim ? "a filter of 0 bytes with a dim of 0" : "a filter of 0 bytes");
  }
  close_graph(&o);
}

/* An external input's dims 32768 x 32768 x 32768 x 32768: 2^60 fp32 elements, whose byte count wrapped to 0, so
 * run handed XNNPACK a buffer of a few bytes for a tensor it read whole (a crash in the first kernel). */
static void external_dims_overflow(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_value* in = NULL;
  for (size_t i = 0; i < o.graph->value_count && in == NULL; i++) {
    xpack_et_xnn_value* v = (xpack_et_xnn_value*)&o.graph->values[i];
    if ((v->flags & XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT) && v->num_dims == 4) in = v;
  }
  EXPECT_MSG(in != NULL, "%s: no 4-dim external input", path);
  if (in) {
    static const uint32_t huge[4] = {32768, 32768, 32768, 32768};
    in->dims = huge;
    expect_refused(&o, "its dims give more than 2^47 bytes", "an external input of 2^60 elements");
  }
  close_graph(&o);
}

/* A 4-bit weight's dims [OC, IC] -> [N, 3] with ceil(3N/2) bytes within its constant but N x 2 past it: XNNPACK
 * reads every row of a 4-bit weight in whole bytes, so it read N/2 bytes past the constant (past the end of
 * the file when it ends there) while the check counted half a byte per element. */
static void four_bit_odd_rows(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  int found = 0;
  for (size_t i = 0; i < o.graph->value_count; i++) {
    xpack_et_xnn_value* w = (xpack_et_xnn_value*)&o.graph->values[i];
    if (w->datatype != XPACK_ET_XNN_DT_QCINT4 && w->datatype != XPACK_ET_XNN_DT_QBINT4) continue;
    if (w->num_dims != 2 || w->constant_buffer_idx == 0) continue;
    found++;
    const uint64_t bytes = (uint64_t)w->dims[0] * w->dims[1] / 2; /* what the constant holds, at least */
    uint32_t dims[2] = {(uint32_t)(bytes * 2 / 3), 3};
    const uint32_t* kept = w->dims;
    w->dims = dims;
    expect_refused(&o, "its constant has", w->datatype == XPACK_ET_XNN_DT_QCINT4 ? "qcint4 weight [N, 3]" : "qbint4 weight [N, 3]");
    w->dims = kept;
  }
  EXPECT_MSG(found >= 2, "%s: %d 4-bit weights, expected qcint4 and qbint4 ones", path, found);
  close_graph(&o);
}

/* The qcint8 filter's per-channel quantization made per-tensor: XNNPACK 4ea82e5 defined it and then read its one
 * scale as the pointer to per-channel scales (SEGV in xnn_init_qs8_qc8w_scale_fp32_params; qbint4 so made divided by
 * a block size of 0; found by a review). */
static void per_tensor_channelwise(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_value* w = NULL;
  for (size_t i = 0; i < o.graph->value_count; i++) {
    if (o.graph->values[i].datatype == XPACK_ET_XNN_DT_QCINT8) w = (xpack_et_xnn_value*)&o.graph->values[i];
  }
  EXPECT_MSG(w != NULL, "%s: no qcint8 value", path);
  if (w) {
    w->quant.kind = XPACK_ET_XNN_QUANT_PER_TENSOR;
    w->quant.scale = 0.01f;
    w->quant.zero_point = 0;
    expect_refused(&o, "per-tensor quantization of a qcint8 tensor", "qcint8 weight quantized per tensor");
  }
  close_graph(&o);
}

/* Scales and zero points XNNPACK refuses to define ("invalid parameter", naming neither the field nor the channel):
 * each refused first by the replay, naming the value, the field or the scale's index, and what it found. */
static xpack_et_xnn_value* value_of_datatype(opened* o, int datatype) {
  for (size_t i = 0; i < o->graph->value_count; i++) {
    if (o->graph->values[i].datatype == datatype) return (xpack_et_xnn_value*)&o->graph->values[i];
  }
  return NULL;
}

static void quantization_parameters(const char* dq_path, const char* q4_path) {
  opened o;
  if (open_graph(dq_path, &o) != 0) { failures++; return; }
  xpack_et_xnn_value* w = value_of_datatype(&o, XPACK_ET_XNN_DT_QCINT8);
  EXPECT_MSG(w != NULL && w->num_dims == 2, "%s: no 2-dim qcint8 value", dq_path);
  if (w && w->num_dims == 2) {
    const xpack_et_xnn_quant kept = w->quant;
    const int16_t kept_type = w->datatype;
    const char* kept_name = w->datatype_name;
    w->datatype = XPACK_ET_XNN_DT_QINT8;
    w->datatype_name = xpack_et_xnn_datatype_name(XPACK_ET_XNN_DT_QINT8);
    w->quant.kind = XPACK_ET_XNN_QUANT_PER_TENSOR;
    w->quant.scale = 0.0f;
    w->quant.zero_point = 0;
    expect_refused(&o, "scale 0 of 1 is 0, expected a positive, normal float", "per-tensor scale 0");
    w->quant.scale = 0.5f;
    w->quant.zero_point = 300;
    expect_refused(&o, "zero_point 300, expected -128 to 127", "qint8 zero point 300");
    w->datatype = kept_type;
    w->datatype_name = kept_name;
    w->quant = kept;
    const uint32_t channels = w->dims[w->quant.channel_dim];
    float* scales = malloc(channels * sizeof *scales);
    if (scales) {
      for (uint32_t c = 0; c < channels; c++) scales[c] = 0.25f;
      scales[channels / 2] = -0.25f;
      w->quant.scale_buffer_idx = 0;
      w->quant.scales = scales;
      w->quant.scale_count = channels;
      char needle[96];
      snprintf(needle, sizeof needle, "per-channel scale %u of %u is -0.25", channels / 2, channels);
      expect_refused(&o, needle, "a negative per-channel scale");
      w->quant = kept;
      free(scales);
    }
  }
  close_graph(&o);

  if (open_graph(q4_path, &o) != 0) { failures++; return; }
  w = value_of_datatype(&o, XPACK_ET_XNN_DT_QBINT4);
  EXPECT_MSG(w != NULL && w->num_dims == 2 && w->quant.group_size > 0, "%s: no 2-dim qbint4 value", q4_path);
  if (w && w->num_dims == 2 && w->quant.group_size > 0) {
    const xpack_et_xnn_quant kept = w->quant;
    const size_t blocks = (size_t)w->dims[0] * w->dims[1] / (size_t)w->quant.group_size;
    float* scales = malloc(blocks * sizeof *scales);
    if (scales) {
      for (size_t b = 0; b < blocks; b++) scales[b] = 0.125f;
      scales[blocks - 1] = 0.0f;
      w->quant.scale_buffer_idx = 0;
      w->quant.scales = scales;
      w->quant.scale_count = (uint32_t)blocks;
      char needle[96];
      snprintf(needle, sizeof needle, "blockwise scale %zu of %zu is 0", blocks - 1, blocks);
      expect_refused(&o, needle, "a blockwise scale of 0");
      w->quant = kept;
      free(scales);
    }
  }
  close_graph(&o);
}

/* The convolution's dilation made 100 across, its window 201 wide over a 32-wide input without padding: XNNPACK made
 * the output 1 wide and read taps past the input through NULL pointers (SEGV in the igemm microkernel at the first
 * inference, found by a review). */
static void window_past_input(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_node* conv = node_of_type(&o, XPACK_ET_XNN_CONV2D);
  EXPECT_MSG(conv != NULL, "%s: no convolution", path);
  if (conv) {
    conv->u.conv.dilation_width = 100;
    conv->u.conv.padding_left = conv->u.conv.padding_right = 0;
    conv->u.conv.flags &= ~(uint32_t)XNN_FLAG_TENSORFLOW_SAME_PADDING;
    expect_refused(&o, "longer than its input's", "convolution window wider than its input");
  }
  close_graph(&o);
}

/* The Convert before the fully-connected node made a global average pooling over the 2-dim input: XNNPACK dropped
 * two dims the input lacks and the fully-connected node's reshape copied a shape of size -8 (SEGV, found by a
 * review). */
static void pooling_of_two_dims(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_node* convert = node_of_type(&o, XPACK_ET_XNN_CONVERT);
  const xpack_et_xnn_value* in = convert ? xpack_et_xnn_graph_find_value(o.graph, convert->u.unary.input_id) : NULL;
  EXPECT_MSG(in != NULL && in->num_dims == 2, "%s: no convert node with a 2-dim input", path);
  if (in && in->num_dims == 2) {
    convert->type = XPACK_ET_XNN_GLOBAL_AVG_POOLING_2D;
    convert->type_name = xpack_et_xnn_node_type_name(convert->type);
    expect_refused(&o, "has 2 dims, expected at least 3", "global average pooling of a 2-dim input");
  }
  close_graph(&o);
}

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: hostile_graphs CONV.pte DECONV.pte FC.pte DQ.pte BMM.pte Q4.pte\n");
    return 2;
  }
  if (xnn_initialize(NULL) != xnn_status_success) return 2;
  depthwise_channels(argv[1]);
  value_flags(argv[2]);
  external_ids(argv[1]);
  output_dims(argv[1]);
  output_dropped(argv[2]);
  output_into_weight(argv[1]);
  reads_later_output(argv[1]);
  fully_connected(argv[3]);
  node_flags(argv[3]);
  deconv_padding(argv[2]);
  deconv_declared_width(argv[2]);
  fully_connected_computed_input(argv[1]);
  dynamic_datatype(argv[4]);
  convert_dims(argv[4]);
  convert_source(argv[4]);
  empty_weight(argv[5]);
  zero_byte_weight(argv[3], 0);
  zero_byte_weight(argv[3], 1);
  output_datatype(argv[1]);
  external_dims_overflow(argv[1]);
  four_bit_odd_rows(argv[6]);
  per_tensor_channelwise(argv[4]);
  quantization_parameters(argv[4], argv[6]);
  window_past_input(argv[1]);
  pooling_of_two_dims(argv[4]);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("hostile graphs refused\n");
  return 0;
}
