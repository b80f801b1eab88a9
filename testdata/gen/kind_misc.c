/* Small single-delegate kinds that cover datatypes and nodes the public files lack. */
#include <math.h>

#include "kinds.h"

enum { ROLE_W = 1, ROLE_B, ROLE_SCALE, ROLE_BMM };

static weight* new_weight(const gen_options* o, weight_pool* pool, uint32_t role, uint32_t index,
                          weight_format f, uint64_t rows, uint64_t cols, float std) {
  weight* w = pool_new(pool);
  if (w) weight_set(w, f, tensor_seed(o->seed, role, index), rows, cols, std);
  return w;
}

static uint32_t scale_of(const gen_options* o) { return o->scale ? o->scale : 1; }

static int finish_single(pte_program* p, xg_graph* g, int8_t st, uint32_t in0, uint32_t in1, uint32_t out0,
                         uint32_t out1) {
  uint32_t pin[1][XG_MAX_DIMS] = {{in0, in1}}, pout[1][XG_MAX_DIMS] = {{out0, out1}};
  uint32_t nd[1] = {2};
  int ok = add_single_delegate_method(p, "forward", g, st, pin, nd, 1, pout, nd, 1);
  xg_free(g);
  return ok;
}

/* Dense layers with bias; activations and filters of datatype dt, biases of bias_dt (XNNPACK takes a bf16
 * filter only with an fp32 bias); the last layer's output is the graph output. */
typedef struct dense_types {
  int16_t dt, bias_dt;
  weight_format wf, bias_wf;
  int8_t scalar_type;
} dense_types;

static int dense_stack(const gen_options* o, weight_pool* pool, pte_program* p, const dense_types* t, uint32_t T,
                       const uint32_t* widths, int nlayers) {
  xg_graph g;
  xg_init(&g, 1, 1, 1);
  uint32_t in_dims[2] = {T, widths[0]};
  uint32_t x = xg_input(&g, 0, t->dt, in_dims, 2);
  for (int l = 0; l < nlayers; l++) {
    uint32_t in = widths[l], out = widths[l + 1];
    weight* w = new_weight(o, pool, ROLE_W, (uint32_t)l, t->wf, out, in, 1.0f / sqrtf((float)in));
    weight* b = new_weight(o, pool, ROLE_B, (uint32_t)l, t->bias_wf, 1, out, 0.02f);
    if (!w || !b) return xg_free(&g), 0;
    uint32_t w_dims[2] = {out, in}, b_dims[1] = {out}, y_dims[2] = {T, out};
    uint32_t filter = xg_constant(&g, w, t->dt, w_dims, 2);
    uint32_t bias = xg_constant(&g, b, t->bias_dt, b_dims, 1);
    int last = l == nlayers - 1;
    uint32_t y = last ? xg_output(&g, 0, t->dt, y_dims, 2) : xg_tensor(&g, t->dt, y_dims, 2);
    xg_node* n = xg_fully_connected(&g, x, filter, bias, y);
    if (!last) xg_set_min_max(n, 0.0f, INFINITY); /* fused ReLU */
    x = y;
  }
  return finish_single(p, &g, t->scalar_type, T, widths[0], T, widths[nlayers]);
}

int build_fp16(const gen_options* o, weight_pool* pool, pte_program* p) {
  static const dense_types fp16 = {XDT_FP16, XDT_FP16, WF_F16, WF_F16, ST_HALF};
  uint32_t s = scale_of(o);
  uint32_t widths[3] = {256 * s, 512 * s, 256 * s};
  return dense_stack(o, pool, p, &fp16, 4, widths, 2);
}

int build_bf16(const gen_options* o, weight_pool* pool, pte_program* p) {
  static const dense_types bf16 = {XDT_BF16, XDT_FP32, WF_BF16, WF_F32, ST_BFLOAT16};
  uint32_t s = scale_of(o);
  uint32_t widths[3] = {256 * s, 512 * s, 256 * s};
  return dense_stack(o, pool, p, &bf16, 4, widths, 2);
}

int build_mlp(const gen_options* o, weight_pool* pool, pte_program* p) {
  uint32_t s = scale_of(o);
  uint32_t widths[4] = {128 * s, 256 * s, 256 * s, 10};
  static const dense_types fp32 = {XDT_FP32, XDT_FP32, WF_F32, WF_F32, ST_FLOAT};
  return dense_stack(o, pool, p, &fp32, 4, widths, 3);
}

int build_qd8_qc8w(const gen_options* o, weight_pool* pool, pte_program* p) {
  uint32_t s = scale_of(o);
  uint32_t T = 8, widths[3] = {256 * s, 1024 * s, 256 * s};
  xg_graph g;
  xg_init(&g, 1, 1, 1);
  uint32_t in_dims[2] = {T, widths[0]};
  uint32_t x = xg_input(&g, 0, XDT_FP32, in_dims, 2);
  for (int l = 0; l < 2; l++) {
    uint32_t in = widths[l], out = widths[l + 1];
    float std = 1.0f / sqrtf((float)in);
    weight* w = new_weight(o, pool, ROLE_W, (uint32_t)l, WF_QC8, out, in, 0);
    weight* sc = new_weight(o, pool, ROLE_SCALE, (uint32_t)l, WF_SCALE_F32, 1, out, std / 40.0f);
    weight* b = new_weight(o, pool, ROLE_B, (uint32_t)l, WF_F32, 1, out, 0.02f);
    if (!w || !sc || !b) return xg_free(&g), 0;
    uint32_t xq_dims[2] = {T, in}, w_dims[2] = {out, in}, b_dims[1] = {out}, y_dims[2] = {T, out};
    uint32_t xq = xg_dynamic_quant(&g, xq_dims, 2, 1);
    xg_node_1x1(&g, XN_CONVERT, x, xq, 0);
    uint32_t filter = xg_constant_per_channel(&g, w, sc, XDT_QCINT8, w_dims, 2, 0);
    uint32_t bias = xg_constant(&g, b, XDT_FP32, b_dims, 1);
    uint32_t y = l == 1 ? xg_output(&g, 0, XDT_FP32, y_dims, 2) : xg_tensor(&g, XDT_FP32, y_dims, 2);
    xg_node* n = xg_fully_connected(&g, xq, filter, bias, y);
    if (l == 0) xg_set_min_max(n, 0.0f, INFINITY);
    x = y;
  }
  return finish_single(p, &g, ST_FLOAT, T, widths[0], T, widths[2]);
}

int build_bmm(const gen_options* o, weight_pool* pool, pte_program* p) {
  uint32_t s = scale_of(o);
  uint32_t B = 4, M = 16, K = 64 * s, N = 32 * s;
  weight* w = new_weight(o, pool, ROLE_BMM, 0, WF_F32, B * K, N, 1.0f / sqrtf((float)K));
  if (!w) return 0;
  xg_graph g;
  xg_init(&g, 2, 1, 1);
  uint32_t a_dims[3] = {B, M, K}, b_dims[3] = {B, K, N}, y_dims[3] = {B, M, N};
  uint32_t a = xg_input(&g, 0, XDT_FP32, a_dims, 3);
  uint32_t wc = xg_constant(&g, w, XDT_FP32, b_dims, 3);
  uint32_t y1 = xg_tensor(&g, XDT_FP32, y_dims, 3);
  xg_node_2x1(&g, XN_BATCH_MATRIX_MULTIPLY, a, wc, y1);
  uint32_t b = xg_input(&g, 1, XDT_FP32, b_dims, 3);
  uint32_t y2 = xg_tensor(&g, XDT_FP32, y_dims, 3);
  xg_node_2x1(&g, XN_BATCH_MATRIX_MULTIPLY, a, b, y2);
  uint32_t out = xg_output(&g, 0, XDT_FP32, y_dims, 3);
  xg_node_2x1(&g, XN_ADD, y1, y2, out);

  uint32_t pin[2][XG_MAX_DIMS] = {{B, M, K}, {B, K, N}}, pout[1][XG_MAX_DIMS] = {{B, M, N}};
  uint32_t nin[2] = {3, 3}, nout[1] = {3};
  int ok = add_single_delegate_method(p, "forward", &g, ST_FLOAT, pin, nin, 2, pout, nout, 1);
  xg_free(&g);
  return ok;
}
