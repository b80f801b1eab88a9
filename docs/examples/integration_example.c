/*
 * A complete program using libpack with XNNPACK directly (docs/INTEGRATION.md walks through it).
 *
 *   integration_example pack model.xpc   build step: record what XNNPACK packs, write the cache
 *   integration_example run  model.xpc   app start: serve the packed weights from the cache
 *   integration_example run  none        app start without a cache (XNNPACK packs)
 *
 * The "model" is one fully-connected layer whose weights the program makes up; a real app gets them from
 * its model file, and binds each one to a stable identity (for ExecuTorch: the weight's named key).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnnpack.h>

#include "xpack.h"

enum { kIn = 256, kOut = 128, kBatch = 4 };

static float g_weight[kOut * kIn];
static float g_bias[kOut];

static void make_model(void) {
  uint32_t s = 12345;
  for (size_t i = 0; i < kOut * kIn; i++) g_weight[i] = (float)((s = s * 1664525u + 1013904223u) >> 9) / (1u << 23) - 1.0f;
  for (size_t i = 0; i < kOut; i++) g_bias[i] = (float)i / kOut;
}

/* Defines the subgraph. Weights are static tensors: XNNPACK keys its cache by their pointers. */
static xnn_subgraph_t define_model(uint32_t* input_id, uint32_t* output_id) {
  xnn_subgraph_t sg = NULL;
  uint32_t w, b;
  const size_t in_dims[2] = {kBatch, kIn}, w_dims[2] = {kOut, kIn}, b_dims[1] = {kOut}, out_dims[2] = {kBatch, kOut};
  if (xnn_create_subgraph(2, 0, &sg) != xnn_status_success ||
      xnn_define_tensor_value(sg, xnn_datatype_fp32, 2, in_dims, NULL, 0, XNN_VALUE_FLAG_EXTERNAL_INPUT, input_id) ||
      xnn_define_tensor_value(sg, xnn_datatype_fp32, 2, w_dims, g_weight, XNN_INVALID_VALUE_ID, 0, &w) ||
      xnn_define_tensor_value(sg, xnn_datatype_fp32, 1, b_dims, g_bias, XNN_INVALID_VALUE_ID, 0, &b) ||
      xnn_define_tensor_value(sg, xnn_datatype_fp32, 2, out_dims, NULL, 1, XNN_VALUE_FLAG_EXTERNAL_OUTPUT, output_id) ||
      xnn_define_fully_connected(sg, -INFINITY, INFINITY, *input_id, w, b, *output_id, 0) != xnn_status_success) {
    fprintf(stderr, "defining the subgraph failed\n");
    exit(1);
  }
  return sg;
}

/* Build step: every weight XNNPACK packs while creating the runtime is recorded and written. */
static int pack(const char* path) {
  xpack_writer* writer;
  xpack_error err;
  if (xpack_writer_create(path, NULL, &writer, &err) != XPACK_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  /* A short name keeps the example readable; a real identity names the bytes and how they are packed (a content
   * hash and the shape, node and quantization: docs/INTEGRATION.md, "At build time: record"), since a name like this
   * would serve this packing to another model version whose layer0 holds other weights. */
  xpack_writer_bind(writer, g_weight, "layer0.weight", strlen("layer0.weight"), NULL);
  xpack_writer_bind(writer, g_bias, "layer0.bias", strlen("layer0.bias"), NULL);
  /* The filter's packing family (operator and datatypes): the cache records its probe, and a loader on
   * another CPU refuses the family if its XNNPACK packs it differently. */
  const xpack_family family = {XPACK_OP_FULLY_CONNECTED, xnn_datatype_fp32, xnn_datatype_fp32, xnn_datatype_fp32,
                               xnn_datatype_fp32, /*block_size=*/0, /*transpose=*/0};
  if (xpack_writer_bind_family(writer, g_weight, &family, &err) != XPACK_OK) {
    fprintf(stderr, "%s\n", err.message); /* the weight would be packed but not recorded */
  }
  uint32_t in, out;
  xnn_subgraph_t sg = define_model(&in, &out);
  xnn_runtime_t rt;
  if (xnn_create_runtime_v4(sg, xpack_writer_provider(writer), NULL, NULL, 0, &rt) != xnn_status_success) {
    xpack_writer_abort(writer); /* nothing appears at path */
    return 1;
  }
  xnn_delete_runtime(rt); /* runtimes go before the writer */
  xnn_delete_subgraph(sg);
  if (xpack_writer_finish(writer, &err) != XPACK_OK) { /* fsync + atomic rename */
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  printf("wrote %s\n", path);
  return 0;
}

/* App start: the cache is optional. Without it (or if it is refused) XNNPACK simply packs.
 * XPACK_OPEN_TRUST_SIZES: this subgraph is defined by hand, so nothing asks XNNPACK how many bytes it reads
 * for each weight (xpack_replay_size_weights does for ExecuTorch programs), and the loader must trust the
 * file's region sizes. Ship such a cache only as you packed it, or check it with `xpack verify --model`. */
static int run(const char* path) {
  xpack_cache* cache = NULL;
  xpack_error err;
  if (strcmp(path, "none") != 0 && xpack_cache_open(path, XPACK_OPEN_TRUST_SIZES, &cache, &err) != XPACK_OK) {
    fprintf(stderr, "cache not used: %s\n", err.message);
  }
  if (cache != NULL && xpack_cache_refusal(cache) != NULL) {
    fprintf(stderr, "cache refused, packing instead: %s\n", xpack_cache_refusal(cache));
  }
  xpack_cache_prefetch(cache); /* a small cache not in the page cache: its reads start now, while we define */
  xpack_cache_bind(cache, g_weight, "layer0.weight", strlen("layer0.weight"), NULL); /* NULL cache: a no-op error */
  xpack_cache_bind(cache, g_bias, "layer0.bias", strlen("layer0.bias"), NULL);
  uint32_t in, out;
  xnn_subgraph_t sg = define_model(&in, &out);
  xnn_runtime_t rt;
  if (xnn_create_runtime_v4(sg, xpack_cache_provider(cache), NULL, NULL, 0, &rt) != xnn_status_success) return 1;
  xpack_cache_unbind_all(cache); /* before the raw weights could be freed */
  xnn_delete_subgraph(sg);

  static float input[kBatch * kIn + XNN_EXTRA_BYTES / sizeof(float)];
  static float output[kBatch * kOut];
  for (size_t i = 0; i < kBatch * kIn; i++) input[i] = (float)(i % 7) - 3.0f;
  const struct xnn_external_value ext[2] = {{in, input}, {out, output}};
  if (xnn_reshape_runtime(rt) || xnn_setup_runtime_v2(rt, 2, ext) || xnn_invoke_runtime(rt)) return 1;
  double sum = 0;
  for (size_t i = 0; i < kBatch * kOut; i++) sum += output[i];
  printf("output checksum %.6f\n", sum);

  if (cache != NULL) {
    xpack_stats s;
    xpack_cache_stats(cache, &s);
    printf("cache: %llu look-ups, %llu hits, %llu misses, %llu heap-fallback bytes\n", (unsigned long long)s.lookups,
           (unsigned long long)s.hits, (unsigned long long)s.misses, (unsigned long long)s.heap_fallback_bytes);
  }
  xnn_delete_runtime(rt); /* every runtime that used the provider, then: */
  xpack_cache_close(cache);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3 || xnn_initialize(NULL) != xnn_status_success) {
    fprintf(stderr, "usage: integration_example pack|run FILE\n");
    return 2;
  }
  make_model();
  return strcmp(argv[1], "pack") == 0 ? pack(argv[2]) : run(argv[2]);
}
