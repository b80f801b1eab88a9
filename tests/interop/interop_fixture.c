/* interop-fixture: a cache for the ExecuTorch export tests that xpack pack cannot make from a program.
 *
 *   interop-fixture cache OUT.xpc   entries covering every naming case of the export: content keys, module
 *                                   paths, unnamed constants, C API identities, a name that two different
 *                                   weights produce, two entries that are one record, two names sharing
 *                                   packed bytes, regions above and below a page
 *
 * Every weight is packed by the real XNNPACK through xpack's recording writer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

#include "xpack.h"
#include "xpack_family.h"

typedef struct fc_case {
  const char* kernel_identity;
  const char* bias_identity; /* NULL: no bias tensor */
  size_t in, out;
  uint32_t weight_seed;      /* equal seeds give equal weights */
  int zero_bias;
} fc_case;

#define HEX64_A "3da85d4c3d8587fde91435eea4d8d5dd37d02cdb4ec940ee555897a0664fb13a"
#define HEX64_B "0587a508a068270e5814b0a34c10e45a74cae3f4c73997a60b83f5540a0ece82"
#define HEX64_C "a7bb6a92a80f8391e73c297503d0cb9034a0f2f33c6b35f486cd44bd34827152"
#define HEX64_D "d0cc63781fd3c4457c0ee4a699afefa43164c29570a39d720a6e94675986f668"
#define HEX64_E "8fd902113e9a4d22684e2a41ff61c50b4a00166e284444bbcba5b776d03bcb35"
#define HEX64_F "243955811122f451bbe7c33001fbf945d783a61a9f6437e68c90f807b0cbc9b1"
#define SUFFIX(size) "#xxh3-128:98506132fa78521f41e0fc0c1854a4ce:" size

static const fc_case kCases[] = {
    /* content key + content-key bias, large region (64x64 fp32 packs to more than a page) */
    {HEX64_A, HEX64_B, 64, 64, 1, 0},
    /* content key, no bias, small region */
    {HEX64_C, NULL, 8, 4, 2, 0},
    /* scale_-prefixed content key (as a kernel it is just a name) */
    {"scale_" HEX64_D, NULL, 8, 8, 3, 0},
    /* module path kernel, content-key bias */
    {"layers.0.wq.weight" SUFFIX("512"), HEX64_E, 16, 8, 4, 0},
    /* unnamed kernel */
    {"xpack:xxh3-128:0123456789abcdef0123456789abcdef:128", NULL, 8, 4, 5, 0},
    /* named kernel, unnamed bias */
    {HEX64_F, "xpack:xxh3-128:fedcba9876543210fedcba9876543210:16", 8, 4, 6, 0},
    /* an identity bound through the C API */
    {"fc/weight", NULL, 8, 4, 7, 0},
    /* "m.a" + "b.c" and "m.ab" + ".c" are both "m.ab.c" to ExecuTorch, with other weights: ambiguous */
    {"m.a" SUFFIX("128"), "b.c" SUFFIX("16"), 8, 4, 8, 0},
    {"m.ab" SUFFIX("128"), ".c" SUFFIX("16"), 8, 4, 9, 0},
    /* "k.a" + zero bias "k.b" and "k.ak.b" without bias: same name, seed and packed bytes: one record */
    {"k.a" SUFFIX("128"), "k.b" SUFFIX("16"), 8, 4, 10, 1},
    {"k.ak.b" SUFFIX("128"), NULL, 8, 4, 10, 0},
    /* two content keys for equal weights: two records sharing one region */
    {"1111111111111111111111111111111111111111111111111111111111111111", NULL, 8, 12, 11, 0},
    {"2222222222222222222222222222222222222222222222222222222222222222", NULL, 8, 12, 11, 0},
};
#define CASE_COUNT (sizeof kCases / sizeof kCases[0])

static float* weights(size_t n, uint32_t seed, int zero) {
  float* w = malloc(n * sizeof *w);
  if (w == NULL) return NULL;
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    x = x * 1664525u + 1013904223u;
    w[i] = zero ? 0.0f : (float)((int)(x >> 9) % 2001 - 1000) / 1000.0f;
  }
  return w;
}

static int pack_case(xpack_writer* w, const fc_case* c, void** keep) {
  xnn_subgraph_t g = NULL;
  if (xnn_create_subgraph(2, 0, &g) != xnn_status_success) return 1;
  float* kernel = weights(c->in * c->out, c->weight_seed, 0);
  float* bias = c->bias_identity ? weights(c->out, c->weight_seed + 1000, c->zero_bias) : NULL;
  keep[0] = kernel;
  keep[1] = bias;
  if (kernel == NULL || (c->bias_identity && bias == NULL)) return 1;
  xpack_writer_bind(w, kernel, c->kernel_identity, strlen(c->kernel_identity), NULL);
  const xpack_family family = {XPACK_OP_FULLY_CONNECTED, xnn_datatype_fp32, xnn_datatype_fp32,
                               bias ? xnn_datatype_fp32 : xnn_datatype_invalid, xnn_datatype_fp32, 0, 0};
  xpack_error err;
  if (xpack_writer_bind_family(w, kernel, &family, &err) != XPACK_OK) {
    fprintf(stderr, "interop-fixture: %s\n", err.message);
    return 1;
  }
  if (bias) xpack_writer_bind(w, bias, c->bias_identity, strlen(c->bias_identity), NULL);
  size_t in_dims[2] = {1, c->in}, out_dims[2] = {1, c->out}, k_dims[2] = {c->out, c->in}, b_dims[1] = {c->out};
  uint32_t in_id, out_id, k_id, b_id = XNN_INVALID_VALUE_ID;
  int bad = xnn_define_tensor_value(g, xnn_datatype_fp32, 2, in_dims, NULL, 0, XNN_VALUE_FLAG_EXTERNAL_INPUT, &in_id) ||
            xnn_define_tensor_value(g, xnn_datatype_fp32, 2, out_dims, NULL, 1, XNN_VALUE_FLAG_EXTERNAL_OUTPUT, &out_id) ||
            xnn_define_tensor_value(g, xnn_datatype_fp32, 2, k_dims, kernel, XNN_INVALID_VALUE_ID, 0, &k_id) ||
            (bias && xnn_define_tensor_value(g, xnn_datatype_fp32, 1, b_dims, bias, XNN_INVALID_VALUE_ID, 0, &b_id)) ||
            xnn_define_fully_connected(g, -INFINITY, INFINITY, in_id, k_id, b_id, out_id, 0);
  xnn_runtime_t rt = NULL;
  if (!bad) bad = xnn_create_runtime_v4(g, xpack_writer_provider(w), NULL, NULL, 0, &rt) != xnn_status_success;
  if (rt) xnn_delete_runtime(rt);
  xnn_delete_subgraph(g);
  return bad;
}

static int make_cache(const char* out) {
  xpack_writer* w;
  xpack_error err;
  if (xpack_writer_create(out, NULL, &w, &err) != XPACK_OK) {
    fprintf(stderr, "interop-fixture: %s\n", err.message);
    return 1;
  }
  xpack_writer_add_input(w, "interop-fixture", XPACK_INPUT_OTHER, 0, 0, 0, 0, NULL);
  void* keep[2 * CASE_COUNT] = {0};
  int bad = 0;
  for (size_t i = 0; i < CASE_COUNT && !bad; i++) {
    bad = pack_case(w, &kCases[i], keep + 2 * i);
    if (bad) fprintf(stderr, "interop-fixture: packing case %zu (%s) failed\n", i, kCases[i].kernel_identity);
  }
  if (bad) {
    xpack_writer_abort(w);
  } else if (xpack_writer_finish(w, &err) != XPACK_OK) {
    fprintf(stderr, "interop-fixture: %s\n", err.message);
    bad = 1;
  }
  for (size_t i = 0; i < 2 * CASE_COUNT; i++) free(keep[i]);
  return bad;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "cache") == 0) {
    if (xnn_initialize(NULL) != xnn_status_success) {
      fprintf(stderr, "interop-fixture: xnn_initialize failed\n");
      return 1;
    }
    return make_cache(argv[2]);
  }
  fprintf(stderr, "usage: interop-fixture cache OUT.xpc\n");
  return 2;
}
