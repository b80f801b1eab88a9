#include "demo_subgraphs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/xnn_compat.h"

/* ---- deterministic weights ---- */

static uint64_t rng_next(uint64_t* s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

typedef struct weight {
  char name[64];
  void* data;
} weight;

static weight g_weights[64];
static size_t g_weight_count;

/* A weight buffer named `name`, created once (the same name gives the same pointer: shared weights). */
static void* weight_buffer(const char* name, size_t bytes, int kind, uint64_t seed) {
  for (size_t i = 0; i < g_weight_count; i++) {
    if (strcmp(g_weights[i].name, name) == 0) return g_weights[i].data;
  }
  void* p = NULL;
  if (g_weight_count == sizeof g_weights / sizeof g_weights[0] || posix_memalign(&p, 64, bytes + 64) != 0) abort();
  uint64_t s = seed;
  if (kind == 'f') {
    float* f = p;
    for (size_t i = 0; i < bytes / sizeof(float); i++) f[i] = (float)((int64_t)(rng_next(&s) >> 40) - (1 << 23)) / (float)(1 << 25);
  } else if (kind == 's') { /* positive scales */
    float* f = p;
    for (size_t i = 0; i < bytes / sizeof(float); i++) f[i] = 0.002f + (float)(rng_next(&s) >> 40) / (float)(1 << 24) * 0.01f;
  } else {
    uint8_t* b = p;
    for (size_t i = 0; i < bytes; i++) b[i] = (uint8_t)rng_next(&s);
  }
  snprintf(g_weights[g_weight_count].name, sizeof g_weights[0].name, "%s", name);
  g_weights[g_weight_count++].data = p;
  return p;
}

void demo_free_weights(void) {
  for (size_t i = 0; i < g_weight_count; i++) free(g_weights[i].data);
  g_weight_count = 0;
}

static const void* bound(demo_bind_fn bind, void* context, const char* name, size_t bytes, int kind, uint64_t seed) {
  void* p = weight_buffer(name, bytes, kind, seed);
  if (bind) bind(context, p, name);
  return p;
}

/* ---- graph helpers ---- */

static void add_family(demo_graph* g, const void* kernel, xpack_family_op op, enum xnn_datatype input,
                       enum xnn_datatype filter, enum xnn_datatype bias, enum xnn_datatype output) {
  if (g->num_families == DEMO_MAX_FAMILIES) abort();
  g->families[g->num_families++] = (demo_family){kernel, {op, input, filter, bias, output, 0, 0}};
}

#define CHECK(call)                               \
  do {                                            \
    enum xnn_status st_ = (call);                 \
    if (st_ != xnn_status_success) return st_;    \
  } while (0)

static enum xnn_status external_f32(demo_graph* g, size_t nd, const size_t* dims, int output, uint32_t ext, uint32_t* id) {
  CHECK(xnn_define_tensor_value(g->subgraph, xnn_datatype_fp32, nd, dims, NULL, ext,
                                output ? XNN_VALUE_FLAG_EXTERNAL_OUTPUT : XNN_VALUE_FLAG_EXTERNAL_INPUT, id));
  size_t n = sizeof(float);
  for (size_t i = 0; i < nd; i++) n *= dims[i];
  demo_external e = {*id, n, 1};
  if (output) g->outputs[g->num_outputs++] = e; else g->inputs[g->num_inputs++] = e;
  return xnn_status_success;
}

static enum xnn_status fc_f32(demo_graph* g, demo_bind_fn bind, void* ctx, size_t batch, size_t in, size_t out,
                              const char* wname, const char* bname, uint64_t seed) {
  uint32_t x, w, b = XNN_INVALID_VALUE_ID, y;
  size_t xd[2] = {batch, in}, wd[2] = {out, in}, bd[1] = {out}, yd[2] = {batch, out};
  CHECK(xnn_create_subgraph(2, 0, &g->subgraph));
  CHECK(external_f32(g, 2, xd, 0, 0, &x));
  const void* kernel = bound(bind, ctx, wname, out * in * 4, 'f', seed);
  CHECK(xnn_define_tensor_value(g->subgraph, xnn_datatype_fp32, 2, wd, kernel, XNN_INVALID_VALUE_ID, 0, &w));
  add_family(g, kernel, XPACK_OP_FULLY_CONNECTED, xnn_datatype_fp32, xnn_datatype_fp32,
             bname ? xnn_datatype_fp32 : xnn_datatype_invalid, xnn_datatype_fp32);
  if (bname) {
    CHECK(xnn_define_tensor_value(g->subgraph, xnn_datatype_fp32, 1, bd, bound(bind, ctx, bname, out * 4, 'f', seed + 1),
                                  XNN_INVALID_VALUE_ID, 0, &b));
  }
  CHECK(external_f32(g, 2, yd, 1, 1, &y));
  return xnn_define_fully_connected(g->subgraph, -INFINITY, INFINITY, x, w, b, y, 0);
}

static enum xnn_status fc_qs8_qc8w(demo_graph* g, demo_bind_fn bind, void* ctx) {
  const size_t batch = 4, in = 64, out = 32;
  uint32_t x, w, b, y;
  size_t xd[2] = {batch, in}, wd[2] = {out, in}, bd[1] = {out}, yd[2] = {batch, out};
  CHECK(xnn_create_subgraph(2, 0, &g->subgraph));
  CHECK(xnn_define_quantized_tensor_value(g->subgraph, xnn_datatype_qint8, 1, 0.5f, 2, xd, NULL, 0,
                                          XNN_VALUE_FLAG_EXTERNAL_INPUT, &x));
  g->inputs[g->num_inputs++] = (demo_external){x, batch * in, 0};
  const float* wscale = bound(bind, ctx, "qc8w/fc.weight_scale", out * 4, 's', 21);
  const void* kernel = bound(bind, ctx, "qc8w/fc.weight", out * in, 'b', 22);
  CHECK(xnn_define_channelwise_quantized_tensor_value_v2(g->subgraph, xnn_datatype_qcint8, 0, wscale, 2, 0, wd, kernel,
                                                         XNN_INVALID_VALUE_ID, 0, &w));
  add_family(g, kernel, XPACK_OP_FULLY_CONNECTED, xnn_datatype_qint8, xnn_datatype_qcint8, xnn_datatype_qcint32,
             xnn_datatype_qint8);
  /* Computed at the first define only: later ones, on several threads at once (tests/tsan), read it. */
  static float bscale[32];
  if (bscale[0] == 0.0f) {
    for (size_t i = 0; i < out; i++) bscale[i] = 0.5f * wscale[i];
  }
  CHECK(xnn_define_channelwise_quantized_tensor_value_v2(g->subgraph, xnn_datatype_qcint32, 0, bscale, 1, 0, bd,
                                                         bound(bind, ctx, "qc8w/fc.bias", out * 4, 'b', 23),
                                                         XNN_INVALID_VALUE_ID, 0, &b));
  CHECK(xnn_define_quantized_tensor_value(g->subgraph, xnn_datatype_qint8, -2, 2.0f, 2, yd, NULL, 1,
                                          XNN_VALUE_FLAG_EXTERNAL_OUTPUT, &y));
  g->outputs[g->num_outputs++] = (demo_external){y, batch * out, 0};
  return xnn_define_fully_connected(g->subgraph, -128.0f, 127.0f, x, w, b, y, 0);
}

static enum xnn_status fc_qd8_qc4w(demo_graph* g, demo_bind_fn bind, void* ctx) {
  const size_t batch = 4, in = 64, out = 32;
  uint32_t x, xq, w, b, y;
  size_t xd[2] = {batch, in}, wd[2] = {out, in}, bd[1] = {out}, yd[2] = {batch, out};
  CHECK(xnn_create_subgraph(2, 0, &g->subgraph));
  CHECK(external_f32(g, 2, xd, 0, 0, &x));
  CHECK(xnn_define_dynamically_quantized_tensor_value(g->subgraph, xnn_datatype_qdint8, 2, 1, xd, XNN_INVALID_VALUE_ID,
                                                      0, &xq));
  CHECK(xnn_define_unary(g->subgraph, xnn_unary_convert, NULL, x, xq, 0));
  const float* wscale = bound(bind, ctx, "qc4w/fc.weight_scale", out * 4, 's', 31);
  const void* kernel = bound(bind, ctx, "qc4w/fc.weight", out * in / 2, 'b', 32);
  CHECK(xnn_define_channelwise_quantized_tensor_value_v2(g->subgraph, xnn_datatype_qcint4, 8, wscale, 2, 0, wd, kernel,
                                                         XNN_INVALID_VALUE_ID, 0, &w));
  add_family(g, kernel, XPACK_OP_FULLY_CONNECTED, xnn_datatype_qdint8, xnn_datatype_qcint4, xnn_datatype_fp32,
             xnn_datatype_fp32);
  CHECK(xnn_define_tensor_value(g->subgraph, xnn_datatype_fp32, 1, bd, bound(bind, ctx, "qc4w/fc.bias", out * 4, 'f', 33),
                                XNN_INVALID_VALUE_ID, 0, &b));
  CHECK(external_f32(g, 2, yd, 1, 1, &y));
  return xnn_define_fully_connected(g->subgraph, -INFINITY, INFINITY, xq, w, b, y, 0);
}

static enum xnn_status conv_f32(demo_graph* g, demo_bind_fn bind, void* ctx) {
  uint32_t x, w, b, y;
  size_t xd[4] = {1, 8, 8, 3}, wd[4] = {16, 3, 3, 3}, bd[1] = {16}, yd[4] = {1, 8, 8, 16};
  CHECK(xnn_create_subgraph(2, 0, &g->subgraph));
  CHECK(external_f32(g, 4, xd, 0, 0, &x));
  const void* kernel = bound(bind, ctx, "conv/weight", 16 * 27 * 4, 'f', 41);
  CHECK(xnn_define_tensor_value(g->subgraph, xnn_datatype_fp32, 4, wd, kernel, XNN_INVALID_VALUE_ID, 0, &w));
  add_family(g, kernel, XPACK_OP_CONVOLUTION_2D, xnn_datatype_fp32, xnn_datatype_fp32, xnn_datatype_fp32,
             xnn_datatype_fp32);
  CHECK(xnn_define_tensor_value(g->subgraph, xnn_datatype_fp32, 1, bd, bound(bind, ctx, "conv/bias", 16 * 4, 'f', 42),
                                XNN_INVALID_VALUE_ID, 0, &b));
  CHECK(external_f32(g, 4, yd, 1, 1, &y));
  return xnn_define_convolution_2d(g->subgraph, 1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, 3, 16, -INFINITY, INFINITY, x, w, b, y, 0);
}

static enum xnn_status dwconv_f32(demo_graph* g, demo_bind_fn bind, void* ctx) {
  uint32_t x, w, b, y;
  size_t xd[4] = {1, 8, 8, 16}, wd[4] = {1, 3, 3, 16}, bd[1] = {16}, yd[4] = {1, 8, 8, 16};
  CHECK(xnn_create_subgraph(2, 0, &g->subgraph));
  CHECK(external_f32(g, 4, xd, 0, 0, &x));
  const void* kernel = bound(bind, ctx, "dwconv/weight", 9 * 16 * 4, 'f', 51);
  CHECK(xnn_define_tensor_value(g->subgraph, xnn_datatype_fp32, 4, wd, kernel, XNN_INVALID_VALUE_ID, 0, &w));
#if XPACK_XNN_CACHES_DEPTHWISE_WEIGHTS
  add_family(g, kernel, XPACK_OP_DEPTHWISE_CONVOLUTION_2D, xnn_datatype_fp32, xnn_datatype_fp32, xnn_datatype_fp32,
             xnn_datatype_fp32);
#else
  (void)kernel; /* this XNNPACK never offers depthwise weights to a cache */
#endif
  CHECK(xnn_define_tensor_value(g->subgraph, xnn_datatype_fp32, 1, bd, bound(bind, ctx, "dwconv/bias", 16 * 4, 'f', 52),
                                XNN_INVALID_VALUE_ID, 0, &b));
  CHECK(external_f32(g, 4, yd, 1, 1, &y));
  return xnn_define_depthwise_convolution_2d(g->subgraph, 1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, 16, -INFINITY, INFINITY, x, w,
                                             b, y, 0);
}

static enum xnn_status deconv_f32(demo_graph* g, demo_bind_fn bind, void* ctx) {
  uint32_t x, w, b, y;
  size_t xd[4] = {1, 4, 4, 8}, wd[4] = {4, 3, 3, 8}, bd[1] = {4}, yd[4] = {1, 8, 8, 4};
  CHECK(xnn_create_subgraph(2, 0, &g->subgraph));
  CHECK(external_f32(g, 4, xd, 0, 0, &x));
  const void* kernel = bound(bind, ctx, "deconv/weight", 4 * 9 * 8 * 4, 'f', 61);
  CHECK(xnn_define_tensor_value(g->subgraph, xnn_datatype_fp32, 4, wd, kernel, XNN_INVALID_VALUE_ID, 0, &w));
  add_family(g, kernel, XPACK_OP_DECONVOLUTION_2D, xnn_datatype_fp32, xnn_datatype_fp32, xnn_datatype_fp32,
             xnn_datatype_fp32);
  CHECK(xnn_define_tensor_value(g->subgraph, xnn_datatype_fp32, 1, bd, bound(bind, ctx, "deconv/bias", 4 * 4, 'f', 62),
                                XNN_INVALID_VALUE_ID, 0, &b));
  CHECK(external_f32(g, 4, yd, 1, 1, &y));
  return xnn_define_deconvolution_2d(g->subgraph, 1, 1, 1, 1, 1, 1, 3, 3, 2, 2, 1, 1, 1, 8, 4, -INFINITY, INFINITY, x, w,
                                     b, y, 0);
}

static const char* const kNames[] = {
    "fc_f32", "fc_qs8_qc8w", "fc_qd8_qc4w", "conv_f32", "dwconv_f32", "deconv_f32",
    "shared_prefill", "shared_decode", "fc_f32_same_bytes",
};

size_t demo_graph_count(void) { return sizeof kNames / sizeof kNames[0]; }
const char* demo_graph_name(size_t index) { return index < demo_graph_count() ? kNames[index] : NULL; }

enum xnn_status demo_define(size_t index, demo_bind_fn bind, void* ctx, demo_graph* g) {
  memset(g, 0, sizeof *g);
  g->name = demo_graph_name(index);
  switch (index) {
    case 0: return fc_f32(g, bind, ctx, 4, 64, 32, "fc/weight", "fc/bias", 11);
    case 1: return fc_qs8_qc8w(g, bind, ctx);
    case 2: return fc_qd8_qc4w(g, bind, ctx);
    case 3: return conv_f32(g, bind, ctx);
    case 4: return dwconv_f32(g, bind, ctx);
    case 5: return deconv_f32(g, bind, ctx);
    /* LLM-like: two graphs (prefill with 8 tokens, decode with 1) over the same layer weights. */
    case 6: return fc_f32(g, bind, ctx, 8, 96, 96, "shared/layer.weight", "shared/layer.bias", 71);
    case 7: return fc_f32(g, bind, ctx, 1, 96, 96, "shared/layer.weight", "shared/layer.bias", 71);
    /* The bytes of fc/weight under another identity and buffer: a second entry, the same region. */
    case 8: return fc_f32(g, bind, ctx, 2, 64, 32, "copy/weight", "copy/bias", 11);
    default: return xnn_status_invalid_parameter;
  }
}
