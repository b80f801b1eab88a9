/* Convolutional kinds, shaped like ExecuTorch exports of NCHW PyTorch models: the channels-last pass
 * wraps the NHWC XNNPACK convolutions in StaticTranspose nodes, and filters are stored OHWI
 * (depthwise: 1HWO). */
#include <math.h>

#include "kinds.h"

enum { ROLE_CONV1_W = 1, ROLE_CONV1_B, ROLE_DW_W, ROLE_DW_B, ROLE_FC_W, ROLE_FC_B, ROLE_DECONV_W, ROLE_DECONV_B };

static const uint32_t k_to_nhwc[4] = {0, 2, 3, 1};
static const uint32_t k_to_nchw[4] = {0, 3, 1, 2};

static weight* new_weight(const gen_options* o, weight_pool* pool, uint32_t role, uint32_t index,
                          weight_format f, uint64_t rows, uint64_t cols, float std) {
  weight* w = pool_new(pool);
  if (w) weight_set(w, f, tensor_seed(o->seed, role, index), rows, cols, std);
  return w;
}

/* Filter and bias of a convolution in the order the exporter defines them: filter, output, bias. */
static uint32_t conv_layer(xg_graph* g, uint8_t type, const xg_conv_params* cp, uint32_t in, weight* w,
                           const uint32_t* w_dims, weight* b, const uint32_t* out_dims, int relu) {
  uint32_t filter = xg_constant(g, w, XDT_FP32, w_dims, 4);
  uint32_t out = xg_tensor(g, XDT_FP32, out_dims, 4);
  uint32_t bias_dims[1] = {(uint32_t)b->cols};
  uint32_t bias = xg_constant(g, b, XDT_FP32, bias_dims, 1);
  xg_node* n = xg_conv(g, type, cp, in, filter, bias, out);
  if (relu) xg_set_min_max(n, 0.0f, INFINITY);
  return out;
}

int build_conv(const gen_options* o, weight_pool* pool, pte_program* p) {
  uint32_t s = o->scale ? o->scale : 1;
  const uint32_t blocks = o->layers; /* --layers: a deep stack on small images, so that it runs fast */
  uint32_t H = blocks ? 8 : 32, W = H, Cin = 3, C = 16 * s, classes = 10;
  weight* w1 = new_weight(o, pool, ROLE_CONV1_W, 0, WF_F32, C, 9 * Cin, 1.0f / sqrtf(9.0f * Cin));
  weight* b1 = new_weight(o, pool, ROLE_CONV1_B, 0, WF_F32, 1, C, 0.02f);
  weight* w2 = new_weight(o, pool, ROLE_DW_W, 0, WF_F32, 9, C, 1.0f / 3.0f); /* [1, 3, 3, C] */
  weight* b2 = new_weight(o, pool, ROLE_DW_B, 0, WF_F32, 1, C, 0.02f);
  weight* w3 = new_weight(o, pool, ROLE_FC_W, 0, WF_F32, classes, C, 1.0f / sqrtf((float)C));
  weight* b3 = new_weight(o, pool, ROLE_FC_B, 0, WF_F32, 1, classes, 0.02f);
  if (!w1 || !b1 || !w2 || !b2 || !w3 || !b3) return 0;

  xg_graph g;
  xg_init(&g, 1, 1, 1);
  uint32_t in_dims[4] = {1, Cin, H, W}, nhwc_dims[4] = {1, H, W, Cin};
  uint32_t x = xg_input(&g, 0, XDT_FP32, in_dims, 4);
  uint32_t xt = xg_tensor(&g, XDT_FP32, nhwc_dims, 4);
  xg_transpose(&g, k_to_nhwc, 4, x, xt);

  xg_conv_params c1 = {1, 1, 1, 1, 3, 3, 1, 1, 1, 1, Cin, C, 1, 0, 0};
  uint32_t w1_dims[4] = {C, 3, 3, Cin}, c1_dims[4] = {1, H, W, C};
  uint32_t y1 = conv_layer(&g, XN_CONV2D, &c1, xt, w1, w1_dims, b1, c1_dims, 1);
  for (uint32_t b = 0; b < blocks; b++) {
    weight* pw = new_weight(o, pool, ROLE_CONV1_W, 1 + b, WF_F32, C, C, 1.0f / sqrtf((float)C));
    weight* pb = new_weight(o, pool, ROLE_CONV1_B, 1 + b, WF_F32, 1, C, 0.02f);
    weight* dw = new_weight(o, pool, ROLE_DW_W, 1 + b, WF_F32, 9, C, 1.0f / 3.0f);
    weight* db = new_weight(o, pool, ROLE_DW_B, 1 + b, WF_F32, 1, C, 0.02f);
    if (!pw || !pb || !dw || !db) {
      xg_free(&g);
      return 0;
    }
    const xg_conv_params pointwise = {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, C, C, 1, 0, 0};
    const xg_conv_params depthwise = {1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, C, 0, 0};
    uint32_t pw_dims[4] = {C, 1, 1, C}, dw_dims[4] = {1, 3, 3, C};
    y1 = conv_layer(&g, XN_CONV2D, &pointwise, y1, pw, pw_dims, pb, c1_dims, 1);
    y1 = conv_layer(&g, XN_DEPTHWISE_CONV2D, &depthwise, y1, dw, dw_dims, db, c1_dims, 1);
  }

  xg_conv_params c2 = {1, 1, 1, 1, 3, 3, 2, 2, 1, 1, 1, 1, C, 0, 0}; /* depth multiplier 1, C groups */
  uint32_t w2_dims[4] = {1, 3, 3, C}, c2_dims[4] = {1, H / 2, W / 2, C};
  uint32_t y2 = conv_layer(&g, XN_DEPTHWISE_CONV2D, &c2, y1, w2, w2_dims, b2, c2_dims, 1);

  uint32_t pooled_dims[4] = {1, 1, 1, C};
  uint32_t pooled = xg_tensor(&g, XDT_FP32, pooled_dims, 4);
  xg_node_1x1(&g, XN_GLOBAL_AVG_POOLING2D, y2, pooled, XNN_FLAG_KEEP_DIMS);
  uint32_t flat_dims[2] = {1, C};
  uint32_t flat = xg_tensor(&g, XDT_FP32, flat_dims, 2);
  xg_reshape(&g, flat_dims, 2, pooled, flat);

  uint32_t w3_dims[2] = {classes, C}, b3_dims[1] = {classes}, out_dims[2] = {1, classes};
  uint32_t filter = xg_constant(&g, w3, XDT_FP32, w3_dims, 2);
  uint32_t bias = xg_constant(&g, b3, XDT_FP32, b3_dims, 1);
  uint32_t out = xg_output(&g, 0, XDT_FP32, out_dims, 2);
  xg_fully_connected(&g, flat, filter, bias, out);

  uint32_t pin[1][XG_MAX_DIMS] = {{1, Cin, H, W}}, pout[1][XG_MAX_DIMS] = {{1, classes}};
  uint32_t nin[1] = {4}, nout[1] = {2};
  int ok = add_single_delegate_method(p, "forward", &g, ST_FLOAT, pin, nin, 1, pout, nout, 1);
  xg_free(&g);
  return ok;
}

int build_deconv(const gen_options* o, weight_pool* pool, pte_program* p) {
  uint32_t s = o->scale ? o->scale : 1;
  uint32_t H = 8, W = 8, C0 = 32 * s, C1 = 16 * s, C2 = 8 * s;
  /* ConvTranspose2d filters serialized OHWI: [Cout, 3, 3, Cin] */
  weight* w1 = new_weight(o, pool, ROLE_DECONV_W, 0, WF_F32, C1, 9 * C0, 1.0f / sqrtf(9.0f * C0));
  weight* b1 = new_weight(o, pool, ROLE_DECONV_B, 0, WF_F32, 1, C1, 0.02f);
  weight* w2 = new_weight(o, pool, ROLE_DECONV_W, 1, WF_F32, C2, 9 * C1, 1.0f / sqrtf(9.0f * C1));
  weight* b2 = new_weight(o, pool, ROLE_DECONV_B, 1, WF_F32, 1, C2, 0.02f);
  if (!w1 || !b1 || !w2 || !b2) return 0;

  xg_graph g;
  xg_init(&g, 1, 1, 1);
  uint32_t in_dims[4] = {1, C0, H, W}, nhwc_dims[4] = {1, H, W, C0};
  uint32_t x = xg_input(&g, 0, XDT_FP32, in_dims, 4);
  uint32_t xt = xg_tensor(&g, XDT_FP32, nhwc_dims, 4);
  xg_transpose(&g, k_to_nhwc, 4, x, xt);

  /* kernel 3, stride 2, padding 1, output_padding 1: doubles height and width */
  xg_conv_params d1 = {1, 1, 1, 1, 3, 3, 2, 2, 1, 1, C0, C1, 1, 1, 1};
  uint32_t w1_dims[4] = {C1, 3, 3, C0}, y1_dims[4] = {1, 2 * H, 2 * W, C1};
  uint32_t y1 = conv_layer(&g, XN_CONV_TRANSPOSE2D, &d1, xt, w1, w1_dims, b1, y1_dims, 1);
  xg_conv_params d2 = {1, 1, 1, 1, 3, 3, 2, 2, 1, 1, C1, C2, 1, 1, 1};
  uint32_t w2_dims[4] = {C2, 3, 3, C1}, y2_dims[4] = {1, 4 * H, 4 * W, C2};
  uint32_t y2 = conv_layer(&g, XN_CONV_TRANSPOSE2D, &d2, y1, w2, w2_dims, b2, y2_dims, 0);

  uint32_t out_dims[4] = {1, C2, 4 * H, 4 * W};
  uint32_t out = xg_output(&g, 0, XDT_FP32, out_dims, 4);
  xg_transpose(&g, k_to_nchw, 4, y2, out);

  uint32_t pin[1][XG_MAX_DIMS] = {{1, C0, H, W}}, pout[1][XG_MAX_DIMS] = {{1, C2, 4 * H, 4 * W}};
  uint32_t nd[1] = {4};
  int ok = add_single_delegate_method(p, "forward", &g, ST_FLOAT, pin, nd, 1, pout, nd, 1);
  xg_free(&g);
  return ok;
}
