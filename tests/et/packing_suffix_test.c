/* xpack_et_packing_suffix on a generated program's graph, changed in memory one parameter at a time: every
 * parameter XNNPACK packs a weight by changes the suffix (its dims and datatype, the node's type and flags; for a
 * quantized weight its scales, and a statically quantized input's and output's scale and zero point), what it
 * does not pack leaves it alone, and two nodes packing one weight otherwise make it ambiguous.
 * Usage: packing_suffix_test QD8.pte (xpack-genmodel qd8-qc8w: fully-connected nodes with qcint8 weights) */
#include <stdio.h>
#include <string.h>

#include "../core/expect.h"
#include "et/xnn_graph_internal.h"
#include "xpack_executorch.h"

typedef struct suffix {
  char text[XPACK_ET_PACKING_SUFFIX_SIZE];
  bool ambiguous;
} suffix;

static suffix suffix_of(const xpack_et_xnn_graph* g, const xpack_et_named_sources* src, uint32_t idx) {
  suffix s = {{0}, false};
  xp_xnn_graph_forget_suffixes((xp_xnn_graph*)g); /* the test changes the graph in memory between calls */
  xpack_error err;
  xpack_status st = xpack_et_packing_suffix(g, src, idx, s.text, &s.ambiguous, &err);
  EXPECT_MSG(st == XPACK_OK, "xpack_et_packing_suffix: %s", st ? err.message : "");
  return s;
}

/* The graph's uses of weights are indexed at parse: after a change of which value has which bytes or which node
 * packs what, index them again (into the graph's arena: a test's few changes). */
static void reindex(xpack_et_xnn_graph* g) { EXPECT(xp_xnn_graph_index_uses((xp_xnn_graph*)g)); }

static xpack_et_xnn_value* value_of(xpack_et_xnn_graph* g, uint32_t id) {
  return (xpack_et_xnn_value*)xpack_et_xnn_graph_find_value(g, id);
}

static void set_static(xpack_et_xnn_value* v, float scale, int32_t zero_point) {
  v->datatype = XPACK_ET_XNN_DT_QINT8;
  v->quant.kind = XPACK_ET_XNN_QUANT_PER_TENSOR;
  v->quant.scale = scale;
  v->quant.zero_point = zero_point;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: packing_suffix_test QD8.pte\n");
    return 2;
  }
  xpack_et_program* program = NULL;
  xpack_et_xnn_graph* g = NULL;
  xpack_error err;
  if (xpack_et_program_open(argv[1], &program, &err) != XPACK_OK ||
      xpack_et_xnn_graph_open(program, 0, 0, &g, &err) != XPACK_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 2;
  }
  xpack_et_named_sources src = {program, NULL, 0};
  xpack_et_xnn_node* fc[2] = {NULL, NULL};
  for (size_t i = 0, n = 0; i < g->node_count && n < 2; i++) {
    if (g->nodes[i].type == XPACK_ET_XNN_FULLY_CONNECTED) fc[n++] = (xpack_et_xnn_node*)&g->nodes[i];
  }
  EXPECT_MSG(fc[0] != NULL && fc[1] != NULL, "%s: fewer than two fully-connected nodes", argv[1]);
  if (fc[0] == NULL || fc[1] == NULL) return 1;
  xpack_et_xnn_value* w = value_of(g, fc[0]->u.fully_connected.filter_id);
  xpack_et_xnn_value* bias = value_of(g, fc[0]->u.fully_connected.bias_id);
  EXPECT_MSG(w != NULL && w->constant_buffer_idx != 0 && w->quant.kind == XPACK_ET_XNN_QUANT_PER_CHANNEL,
             "the first fully-connected node's filter is not a per-channel quantized constant");
  if (w == NULL || w->constant_buffer_idx == 0) return 1;
  const uint32_t idx = w->constant_buffer_idx;

  const suffix plain = suffix_of(g, &src, idx);
  EXPECT_MSG(strncmp(plain.text, XPACK_ET_PACKING_SUFFIX_PREFIX, 5) == 0 && strlen(plain.text) == 37 &&
             !plain.ambiguous, "a quantized weight's suffix: '%s'", plain.text);
  EXPECT_MSG(strcmp(suffix_of(g, &src, idx).text, plain.text) == 0, "the same graph gives another suffix");
  if (bias != NULL && bias->constant_buffer_idx != 0 && bias->quant.kind == XPACK_ET_XNN_QUANT_NONE) {
    const suffix b = suffix_of(g, &src, bias->constant_buffer_idx);
    EXPECT_MSG(strlen(b.text) == 37 && strcmp(b.text, plain.text) != 0 && !b.ambiguous, "a float bias's suffix: '%s'",
               b.text);
  }

  /* Its shape and datatype, and the node's flags (its type: model_shape_identity): XNNPACK's seed is an XOR of sizes, equal for [O, I]
   * and [I, O]. */
  if (w->num_dims == 2 && w->dims[0] != w->dims[1]) {
    uint32_t* dims = (uint32_t*)w->dims;
    const uint32_t d0 = dims[0];
    dims[0] = dims[1], dims[1] = d0;
    EXPECT_MSG(strcmp(suffix_of(g, &src, idx).text, plain.text) != 0, "the weight's dims are not in the suffix");
    dims[1] = dims[0], dims[0] = d0;
  } else {
    EXPECT_MSG(0, "the weight is not a 2-d matrix of two sizes");
  }
  const int16_t datatype = w->datatype;
  w->datatype = datatype == XPACK_ET_XNN_DT_QINT8 ? XPACK_ET_XNN_DT_QCINT8 : XPACK_ET_XNN_DT_QINT8;
  EXPECT_MSG(strcmp(suffix_of(g, &src, idx).text, plain.text) != 0, "the weight's datatype is not in the suffix");
  w->datatype = datatype;
  fc[0]->u.fully_connected.flags ^= 1; /* XNN_FLAG_TRANSPOSE_WEIGHTS */
  EXPECT_MSG(strcmp(suffix_of(g, &src, idx).text, plain.text) != 0, "the node's flags are not in the suffix");
  fc[0]->u.fully_connected.flags ^= 1;
  EXPECT_MSG(strcmp(suffix_of(g, &src, idx).text, plain.text) == 0, "restored, the suffix differs");

  /* The weight's own quantization. */
  const int32_t channel_dim = w->quant.channel_dim;
  w->quant.channel_dim = channel_dim == 0 ? 1 : 0;
  EXPECT_MSG(strcmp(suffix_of(g, &src, idx).text, plain.text) != 0, "channel_dim is not in the suffix");
  w->quant.channel_dim = channel_dim;
  const uint32_t scales = w->quant.scale_buffer_idx;
  if (scales != 0) {
    /* Another scale constant: the second layer's. */
    xpack_et_xnn_value* w2 = value_of(g, fc[1]->u.fully_connected.filter_id);
    if (w2 != NULL && w2->quant.scale_buffer_idx != 0 && w2->quant.scale_buffer_idx != scales) {
      w->quant.scale_buffer_idx = w2->quant.scale_buffer_idx;
      EXPECT_MSG(strcmp(suffix_of(g, &src, idx).text, plain.text) != 0, "the scales' identity is not in the suffix");
      w->quant.scale_buffer_idx = scales;
    }
  }

  /* A dynamically quantized input packs nothing of it: its parameters leave the suffix alone. */
  xpack_et_xnn_value* in = value_of(g, fc[0]->u.fully_connected.input1_id);
  xpack_et_xnn_value* out = value_of(g, fc[0]->u.fully_connected.output_id);
  EXPECT_MSG(in != NULL && out != NULL, "the first fully-connected node's input or output is not a value");
  if (in == NULL || out == NULL) return 1;
  const xpack_et_xnn_value in_saved = *in, out_saved = *out;
  in->quant.scale += 1.0f;
  EXPECT_MSG(strcmp(suffix_of(g, &src, idx).text, plain.text) == 0, "a dynamic input's scale changed the suffix");
  *in = in_saved;
  /* The legacy dynamic-quantization marker on the input makes XNNPACK pack for a qd8 input, not an f32 one. */
  in->dq_datatype = in->dq_datatype == 0 ? XPACK_ET_XNN_DT_QDINT8 : 0;
  EXPECT_MSG(strcmp(suffix_of(g, &src, idx).text, plain.text) != 0, "the input's dq_datatype is not in the suffix");
  *in = in_saved;

  /* A statically quantized input and output are packed with the weight: each of their parameters counts. */
  set_static(in, 0.5f, 3);
  set_static(out, 0.25f, -2);
  const suffix static_io = suffix_of(g, &src, idx);
  EXPECT_MSG(static_io.text[0] != '\0' && strcmp(static_io.text, plain.text) != 0, "static activations: '%s'",
             static_io.text);
  const struct { float* field; float changed; const char* what; } floats[] = {
      {&in->quant.scale, 0.75f, "the input scale"}, {&out->quant.scale, 0.125f, "the output scale"}};
  for (size_t i = 0; i < 2; i++) {
    const float kept = *floats[i].field;
    *floats[i].field = floats[i].changed;
    EXPECT_MSG(strcmp(suffix_of(g, &src, idx).text, static_io.text) != 0, "%s is not in the suffix", floats[i].what);
    *floats[i].field = kept;
  }
  in->quant.zero_point = 4;
  EXPECT_MSG(strcmp(suffix_of(g, &src, idx).text, static_io.text) != 0, "the input zero point is not in the suffix");
  in->quant.zero_point = 3;
  out->quant.zero_point = 5;
  EXPECT_MSG(strcmp(suffix_of(g, &src, idx).text, static_io.text) != 0, "the output zero point is not in the suffix");
  out->quant.zero_point = -2;

  /* The second node packs the same weight under other activations (its own input and output, static with other
   * parameters): no single name fits. */
  const uint32_t filter1 = fc[1]->u.fully_connected.filter_id;
  fc[1]->u.fully_connected.filter_id = fc[0]->u.fully_connected.filter_id;
  reindex(g);
  xpack_et_xnn_value* in1 = value_of(g, fc[1]->u.fully_connected.input1_id);
  xpack_et_xnn_value* out1 = value_of(g, fc[1]->u.fully_connected.output_id);
  if (in1 != NULL && out1 != NULL && in1 != in && out1 != out) {
    const xpack_et_xnn_value in1_saved = *in1, out1_saved = *out1;
    set_static(in1, 0.5f, 3);
    set_static(out1, 0.25f, -2);
    const suffix same = suffix_of(g, &src, idx);
    EXPECT_MSG(!same.ambiguous && strcmp(same.text, static_io.text) == 0, "two nodes alike made it ambiguous");
    out1->quant.scale = 0.0625f;
    const suffix two = suffix_of(g, &src, idx);
    EXPECT_MSG(two.ambiguous && two.text[0] == '\0', "two nodes packing it otherwise: not ambiguous ('%s')", two.text);
    *in1 = in1_saved;
    *out1 = out1_saved;
  } else {
    EXPECT_MSG(0, "the second fully-connected node shares the first one's input or output");
  }
  fc[1]->u.fully_connected.filter_id = filter1;
  reindex(g);
  *in = in_saved;
  *out = out_saved;

  /* The same bytes used as a float value too, before or after the quantized one in value order: ambiguous. */
  for (size_t i = 0; i < g->value_count; i++) {
    xpack_et_xnn_value* other = (xpack_et_xnn_value*)&g->values[i];
    if (other == w || other->quant.kind != XPACK_ET_XNN_QUANT_NONE) continue;
    const uint32_t kept = other->constant_buffer_idx;
    other->constant_buffer_idx = idx;
    reindex(g);
    const suffix mixed = suffix_of(g, &src, idx);
    EXPECT_MSG(mixed.ambiguous, "value %zu (%s the weight) as a float use of its bytes: not ambiguous", i,
               other->index < w->index ? "before" : "after");
    other->constant_buffer_idx = kept;
    reindex(g);
  }
  EXPECT_MSG(strcmp(suffix_of(g, &src, idx).text, plain.text) == 0, "restored, the suffix differs");

  xpack_et_xnn_graph_free(g);
  xpack_et_program_close(program);
  printf("packing_suffix: %d failure(s)\n", failures);
  return failures ? 1 : 0;
}
