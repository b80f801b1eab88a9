/* Programs whose weights share bytes with another program's, or with each other, in other shapes and nodes.
 *
 * XNNPACK's weights-cache seed is an XOR of a few sizes: an FC of [8, 17] and one of [17, 8] give the same seed,
 * and so can convolutions of other kernel sizes and groups, or a 1x1 convolution and an FC, with equal packed
 * sizes. A cache that named a weight by its bytes alone served one shape's packing to the other (wrong outputs,
 * every look-up a hit). Each branch below has its own input and output; equal weight numbers mean equal bytes.
 *   shapes-a:    FC [8, 17]; Conv2d 2x2, 16 -> 34 channels, 1 group, bias; Conv2d 1x1, 3 -> 16
 *   shapes-b:    the same bytes as FC [17, 8]; Conv2d 1x2, 64 -> 34, 2 groups (the same bias); FC [24, 2]
 *   shapes-tied: one weight's bytes in two FC nodes, [8, 17] and [17, 8] */
#include <string.h>

#include "kinds.h"

enum { MAX_BRANCHES = 4 };

typedef struct branch {
  int conv; /* 0: FullyConnected [out, in] */
  uint32_t out, in, kernel_h, kernel_w, groups, bias, weight;
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
    weight* w = make_weight(o, pool, 1, r->weight, count);
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
  const branch b[] = {{0, 8, 17, 1, 1, 1, 0, 1}, {1, 34, 16, 2, 2, 1, 1, 2}, {1, 16, 3, 1, 1, 1, 0, 3}};
  return build_branches(o, pool, p, b, 3);
}

int build_shapes_b(const gen_options* o, weight_pool* pool, pte_program* p) {
  const branch b[] = {{0, 17, 8, 1, 1, 1, 0, 1}, {1, 34, 64, 1, 2, 2, 1, 2}, {0, 24, 2, 1, 1, 1, 0, 3}};
  return build_branches(o, pool, p, b, 3);
}

int build_shapes_tied(const gen_options* o, weight_pool* pool, pte_program* p) {
  const branch b[] = {{0, 8, 17, 1, 1, 1, 0, 1}, {0, 17, 8, 1, 1, 1, 0, 1}};
  return build_branches(o, pool, p, b, 2);
}
