/* Programs whose weights share bytes with another program's, or with each other, in other shapes and nodes.
 *
 * XNNPACK's weights-cache seed is an XOR of a few sizes: an FC of [8, 17] and one of [17, 8] give the same seed,
 * and so can convolutions of other kernel sizes and groups, or a 1x1 convolution and an FC, with equal packed
 * sizes. A cache that named a weight by its bytes alone served one shape's packing to the other (wrong outputs,
 * every look-up a hit). Each branch below has its own input and output; equal weight numbers mean equal bytes.
 *   shapes-a:    FC [8, 17]; Conv2d 2x2, 16 -> 34 channels, 1 group, bias; Conv2d 1x1, 3 -> 16
 *   shapes-b:    the same bytes as FC [17, 8]; Conv2d 1x2, 64 -> 34, 2 groups (the same bias); FC [24, 2]
 *   shapes-tied: one weight's bytes in two FC nodes, [8, 17] and [17, 8]
 *   shapes-alias: shapes-tied with the two weights keyed by module path (fc0.weight, fc1.weight): equal bytes,
 *                 so both keys name one segment (as ExecuTorch's NamedDataStore stores them) and one pointer
 *   shapes-alias-one: shapes-alias's fc1.weight alone, as FC [17, 8] (its key, its bytes)
 *   shapes-scale-alias: FC [8, 17] and [17, 8] over 136 positive floats that are also the per-channel scales of
 *                 a qd8 x qc8w FC [136, 4] (one key, one segment)
 *   shapes-bias-a: FC [8, 17] with a bias whose 8 floats are also the weight of an FC [2, 4]: the bias has no
 *                 single name, and a key naming it by that (xpack:ambiguous) stood for any bias
 *   shapes-bias-b: shapes-bias-a with other bias bytes (the same FC [8, 17] weight)
 *   shapes-bias-two: one FC [8, 17] weight with shapes-bias-a's bias and with shapes-bias-b's, both biases also
 *                 FC [2, 4] weights: two keys with one weight, one seed and two ambiguous biases */
#include <stdio.h>
#include <string.h>

#include "kinds.h"

enum { MAX_BRANCHES = 4 };

typedef struct branch {
  int conv; /* 0: FullyConnected [out, in] */
  uint32_t out, in, kernel_h, kernel_w, groups, bias, weight;
  const char* key; /* the weight's named-data key; NULL: its bytes' SHA-256 */
  uint32_t weight_role; /* whose bytes the weight has: 2 = the bias numbered `weight`; 0 = its own */
} branch;

/* fp32 normal(0, 0.3) weights, bytes fixed by (role, number) and count. */
static weight* make_weight(const gen_options* o, weight_pool* pool, uint32_t role, uint32_t number, uint64_t count) {
  weight* w = pool_new(pool);
  if (w) weight_set(w, WF_F32, tensor_seed(o->seed, role, number), 1, count, role == 1 ? 0.3f : 0.1f);
  return w;
}

static int build_branches(const gen_options* o, weight_pool* pool, pte_program* p, const branch* b, int n) {
  enum { SIDE = 5 }; /* convolution inputs are 1 x SIDE x SIDE x channels (NHWC) */
  xg_graph g;
  xg_init(&g, (uint32_t)n, (uint32_t)n, 1);
  uint32_t in_dims[MAX_BRANCHES][XG_MAX_DIMS], out_dims[MAX_BRANCHES][XG_MAX_DIMS], in_nd[MAX_BRANCHES],
      out_nd[MAX_BRANCHES], inputs[MAX_BRANCHES];
  for (int k = 0; k < n; k++) {
    const uint32_t fc[2] = {3, b[k].in}, conv[4] = {1, SIDE, SIDE, b[k].in};
    in_nd[k] = b[k].conv ? 4 : 2;
    memcpy(in_dims[k], b[k].conv ? conv : fc, in_nd[k] * sizeof(uint32_t));
    inputs[k] = xg_input(&g, (uint32_t)k, XDT_FP32, in_dims[k], in_nd[k]);
  }
  int ok = 1;
  for (int k = 0; k < n && ok; k++) {
    const branch* r = &b[k];
    const uint32_t per_group = r->conv ? r->in / r->groups : r->in;
    const uint64_t count = (uint64_t)r->out * r->kernel_h * r->kernel_w * per_group;
    weight* w = make_weight(o, pool, r->weight_role ? r->weight_role : 1, r->weight, count);
    if (w != NULL && r->key != NULL) snprintf(w->name, sizeof w->name, "%s", r->key);
    weight* bias_bytes = r->bias ? make_weight(o, pool, 2, r->bias, r->out) : NULL;
    if (!w || (r->bias && !bias_bytes)) {
      ok = 0;
      break;
    }
    uint32_t bias = XNN_INVALID_ID;
    if (bias_bytes) {
      const uint32_t bd[1] = {r->out};
      bias = xg_constant(&g, bias_bytes, XDT_FP32, bd, 1);
    }
    if (r->conv) {
      const uint32_t fd[4] = {r->out, r->kernel_h, r->kernel_w, per_group};
      const uint32_t od[4] = {1, SIDE - r->kernel_h + 1, SIDE - r->kernel_w + 1, r->out};
      const uint32_t filter = xg_constant(&g, w, XDT_FP32, fd, 4);
      const uint32_t y = xg_output(&g, (uint32_t)k, XDT_FP32, od, 4);
      const xg_conv_params cp = {0, 0, 0, 0, r->kernel_h, r->kernel_w, 1, 1, 1, 1,
                                 per_group, r->out / r->groups, r->groups, 0, 0};
      xg_conv(&g, XN_CONV2D, &cp, inputs[k], filter, bias, y);
      memcpy(out_dims[k], od, sizeof od);
      out_nd[k] = 4;
    } else {
      const uint32_t fd[2] = {r->out, r->in}, od[2] = {3, r->out};
      const uint32_t filter = xg_constant(&g, w, XDT_FP32, fd, 2);
      const uint32_t y = xg_output(&g, (uint32_t)k, XDT_FP32, od, 2);
      xg_fully_connected(&g, inputs[k], filter, bias, y);
      memcpy(out_dims[k], od, sizeof od);
      out_nd[k] = 2;
    }
  }
  ok = ok && add_single_delegate_method(p, "forward", &g, ST_FLOAT, (const uint32_t(*)[XG_MAX_DIMS])in_dims, in_nd,
                                        n, (const uint32_t(*)[XG_MAX_DIMS])out_dims, out_nd, n);
  xg_free(&g);
  return ok;
}

int build_shapes_a(const gen_options* o, weight_pool* pool, pte_program* p) {
  const branch b[] = {{0, 8, 17, 1, 1, 1, 0, 1, NULL, 0}, {1, 34, 16, 2, 2, 1, 1, 2, NULL, 0},
                      {1, 16, 3, 1, 1, 1, 0, 3, NULL, 0}};
  return build_branches(o, pool, p, b, 3);
}

int build_shapes_b(const gen_options* o, weight_pool* pool, pte_program* p) {
  const branch b[] = {{0, 17, 8, 1, 1, 1, 0, 1, NULL, 0}, {1, 34, 64, 1, 2, 2, 1, 2, NULL, 0},
                      {0, 24, 2, 1, 1, 1, 0, 3, NULL, 0}};
  return build_branches(o, pool, p, b, 3);
}

int build_shapes_tied(const gen_options* o, weight_pool* pool, pte_program* p) {
  const branch b[] = {{0, 8, 17, 1, 1, 1, 0, 1, NULL, 0}, {0, 17, 8, 1, 1, 1, 0, 1, NULL, 0}};
  return build_branches(o, pool, p, b, 2);
}

int build_shapes_alias(const gen_options* o, weight_pool* pool, pte_program* p) {
  const branch b[] = {{0, 8, 17, 1, 1, 1, 0, 1, "fc0.weight", 0}, {0, 17, 8, 1, 1, 1, 0, 1, "fc1.weight", 0}};
  return build_branches(o, pool, p, b, 2);
}

int build_shapes_alias_one(const gen_options* o, weight_pool* pool, pte_program* p) {
  const branch b[] = {{0, 17, 8, 1, 1, 1, 0, 1, "fc1.weight", 0}};
  return build_branches(o, pool, p, b, 1);
}

int build_shapes_scale_alias(const gen_options* o, weight_pool* pool, pte_program* p) {
  weight* scales = pool_new(pool);
  weight* q = pool_new(pool);
  if (scales == NULL || q == NULL) return 0;
  weight_set(scales, WF_SCALE_F32, tensor_seed(o->seed, 7, 1), 1, 136, 0.05f);
  weight_set(q, WF_QC8, tensor_seed(o->seed, 7, 2), 136, 4, 0);
  xg_graph g;
  xg_init(&g, 3, 3, 1);
  const uint32_t in[3][XG_MAX_DIMS] = {{3, 17}, {3, 8}, {2, 4}}, out[3][XG_MAX_DIMS] = {{3, 8}, {3, 17}, {2, 136}};
  const uint32_t nd[3] = {2, 2, 2};
  uint32_t x[3];
  for (uint32_t k = 0; k < 3; k++) x[k] = xg_input(&g, k, XDT_FP32, in[k], 2);
  const uint32_t f0d[2] = {8, 17}, f1d[2] = {17, 8}, qd[2] = {136, 4};
  xg_fully_connected(&g, x[0], xg_constant(&g, scales, XDT_FP32, f0d, 2), XNN_INVALID_ID,
                     xg_output(&g, 0, XDT_FP32, out[0], 2));
  xg_fully_connected(&g, x[1], xg_constant(&g, scales, XDT_FP32, f1d, 2), XNN_INVALID_ID,
                     xg_output(&g, 1, XDT_FP32, out[1], 2));
  const uint32_t xq = xg_dynamic_quant(&g, in[2], 2, 1);
  xg_node_1x1(&g, XN_CONVERT, x[2], xq, 0);
  xg_fully_connected(&g, xq, xg_constant_per_channel(&g, q, scales, XDT_QCINT8, qd, 2, 0), XNN_INVALID_ID,
                     xg_output(&g, 2, XDT_FP32, out[2], 2));
  const int ok = add_single_delegate_method(p, "forward", &g, ST_FLOAT, in, nd, 3, out, nd, 3);
  xg_free(&g);
  return ok;
}

int build_shapes_bias_a(const gen_options* o, weight_pool* pool, pte_program* p) {
  const branch b[] = {{0, 8, 17, 1, 1, 1, 5, 1, NULL, 0}, {0, 2, 4, 1, 1, 1, 0, 5, NULL, 2}};
  return build_branches(o, pool, p, b, 2);
}

int build_shapes_bias_b(const gen_options* o, weight_pool* pool, pte_program* p) {
  const branch b[] = {{0, 8, 17, 1, 1, 1, 6, 1, NULL, 0}, {0, 2, 4, 1, 1, 1, 0, 6, NULL, 2}};
  return build_branches(o, pool, p, b, 2);
}

int build_shapes_bias_two(const gen_options* o, weight_pool* pool, pte_program* p) {
  const branch b[] = {{0, 8, 17, 1, 1, 1, 5, 1, NULL, 0}, {0, 8, 17, 1, 1, 1, 6, 1, NULL, 0},
                      {0, 2, 4, 1, 1, 1, 0, 5, NULL, 2}, {0, 2, 4, 1, 1, 1, 0, 6, NULL, 2}};
  return build_branches(o, pool, p, b, 4);
}
