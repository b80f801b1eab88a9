/* Family probes: the canonical probe subgraph of each family, run through a capturing provider.
 * docs/FORMAT.md, section 5.8, is the normative description of every shape, value and the hash. */
#include "loader/probe.h"
#include "loader/xnn_compat.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t inside the capture */
#include <xxhash.h>

#include "common/error.h"
#include "common/le.h"
#include "loader/own_runtime.h"
#include "xpack_loader.h"

#define PROBE_MAX_BUFFERS 64
#define PROBE_ALIGNMENT 64 /* at least XNN_ALLOCATION_ALIGNMENT on every target */

/* ---- the capturing provider: every packed weight hashed in insertion order ---- */

typedef struct capture {
  struct xnn_weights_cache_provider provider;
  XXH3_state_t hash;
  XXH3_state_t keys; /* the seeds XNNPACK keys the probe's weights with: CPU-dependent tiling and kernel type */
  void* reserved[PROBE_MAX_BUFFERS]; /* every buffer XNNPACK packed into; freed after the runtime */
  size_t reserved_count;
  void* inserted[PROBE_MAX_BUFFERS]; /* offset i -> inserted[i] */
  size_t inserted_count;
  int failed;
} capture;

static size_t capture_look_up(void* context, const struct xnn_weights_cache_look_up_key* key) {
  return SIZE_MAX; /* nothing is ever found: XNNPACK packs every weight of the probe */
}

static void* capture_reserve_space(void* context, size_t n) {
  capture* c = context;
  void* p = NULL;
  if (c->reserved_count == PROBE_MAX_BUFFERS || posix_memalign(&p, PROBE_ALIGNMENT, n ? n : 1) != 0) {
    c->failed = 1;
    return NULL;
  }
  c->reserved[c->reserved_count++] = p;
  return p;
}

static size_t capture_look_up_or_insert(void* context, const struct xnn_weights_cache_look_up_key* key, void* ptr,
                                        size_t size) {
  capture* c = context;
  if (ptr == NULL) return SIZE_MAX;
  if (c->inserted_count == PROBE_MAX_BUFFERS) {
    c->failed = 1;
    return SIZE_MAX;
  }
  uint8_t word[8];
  xp_put64(word, (uint64_t)size);
  XXH3_64bits_update(&c->hash, word, sizeof word);
  XXH3_64bits_update(&c->hash, ptr, size);
  uint8_t seed[4];
  xp_put32(seed, key->seed);
  XXH3_64bits_update(&c->keys, seed, sizeof seed);
  c->inserted[c->inserted_count] = ptr;
  return c->inserted_count++;
}

static bool capture_is_finalized(void* context) { return true; }

static void* capture_offset_to_addr(void* context, size_t offset) {
  capture* c = context;
  return offset < c->inserted_count ? c->inserted[offset] : NULL;
}

static enum xnn_status capture_delete_cache(void* context) { return xnn_status_success; }

/* ---- canonical values ---- */

static int canonical(size_t i, unsigned salt) { return (int)((i * 7 + salt * 3) % 15) - 7; }

/* Exact for the probe's values (multiples of 1/8 below 2 in magnitude). */
static uint16_t to_half(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  if ((u & 0x7fffffff) == 0) return sign;
  int exponent = (int)((u >> 23) & 0xff) - 127 + 15;
  return (uint16_t)(sign | (uint16_t)(exponent << 10) | (uint16_t)((u >> 13) & 0x3ff));
}

static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (uint16_t)(u >> 16); /* exact for the probe's scales and bf16 filter values */
}

typedef struct probe {
  const xpack_family* f;
  xnn_subgraph_t sg;
  uint32_t next_external;
  void* allocations[PROBE_MAX_BUFFERS];
  size_t allocation_count;
} probe;

static void* keep(probe* p, size_t bytes) {
  if (p->allocation_count == PROBE_MAX_BUFFERS) return NULL;
  void* m = calloc(1, bytes + 16);
  if (m != NULL) p->allocations[p->allocation_count++] = m;
  return m;
}

/* Weight-quantization constants of the probe (docs/FORMAT.md 5.8). */
#define INPUT_SCALE 0.5f
#define OUTPUT_SCALE 2.0f
#define FILTER_SCALE 0.25f
static float channel_scale(size_t c) { return 0.25f + (float)(c % 5) / 32.0f; }

/* ---- tensors ---- */

#define TRY(call)                                  \
  do {                                             \
    enum xnn_status s_ = (call);                   \
    if (s_ != xnn_status_success) return s_;       \
  } while (0)

/* The node's input: an external of the input datatype, or for qd8 an fp32 external converted to a
 * dynamically quantized value, as ExecuTorch defines it. */
static enum xnn_status define_input(probe* p, size_t nd, const size_t* dims, uint32_t* id) {
  const uint32_t ext = p->next_external++;
  switch (p->f->input) {
    case xnn_datatype_qint8:
      return xnn_define_quantized_tensor_value(p->sg, xnn_datatype_qint8, 1, INPUT_SCALE, nd, dims, NULL, ext,
                                               XNN_VALUE_FLAG_EXTERNAL_INPUT, id);
    case xnn_datatype_quint8:
      return xnn_define_quantized_tensor_value(p->sg, xnn_datatype_quint8, 128, INPUT_SCALE, nd, dims, NULL, ext,
                                               XNN_VALUE_FLAG_EXTERNAL_INPUT, id);
    case xnn_datatype_qdint8: {
      uint32_t raw;
      TRY(xnn_define_tensor_value(p->sg, xnn_datatype_fp32, nd, dims, NULL, ext, XNN_VALUE_FLAG_EXTERNAL_INPUT, &raw));
      TRY(xnn_define_dynamically_quantized_tensor_value(p->sg, xnn_datatype_qdint8, nd, 1, dims, XNN_INVALID_VALUE_ID,
                                                        0, id));
      return xnn_define_unary(p->sg, xnn_unary_convert, NULL, raw, *id, 0);
    }
    default:
      return xnn_define_tensor_value(p->sg, p->f->input, nd, dims, NULL, ext, XNN_VALUE_FLAG_EXTERNAL_INPUT, id);
  }
}

static enum xnn_status define_output(probe* p, size_t nd, const size_t* dims, uint32_t* id) {
  const uint32_t ext = p->next_external++;
  switch (p->f->output) {
    case xnn_datatype_qint8:
      return xnn_define_quantized_tensor_value(p->sg, xnn_datatype_qint8, -2, OUTPUT_SCALE, nd, dims, NULL, ext,
                                               XNN_VALUE_FLAG_EXTERNAL_OUTPUT, id);
    case xnn_datatype_quint8:
      return xnn_define_quantized_tensor_value(p->sg, xnn_datatype_quint8, 130, OUTPUT_SCALE, nd, dims, NULL, ext,
                                               XNN_VALUE_FLAG_EXTERNAL_OUTPUT, id);
    default:
      return xnn_define_tensor_value(p->sg, p->f->output, nd, dims, NULL, ext, XNN_VALUE_FLAG_EXTERNAL_OUTPUT, id);
  }
}

/* The filter: `channels` output channels along `channel_dim`, `elements` values in row-major order. */
static enum xnn_status define_filter(probe* p, size_t nd, const size_t* dims, size_t channel_dim, uint32_t* id) {
  size_t elements = 1;
  for (size_t i = 0; i < nd; i++) elements *= dims[i];
  const size_t channels = dims[channel_dim];
  const enum xnn_datatype dt = p->f->filter;
  const int nibbles = dt == xnn_datatype_qcint4 || dt == xnn_datatype_qbint4;
  const size_t element_bytes = dt == xnn_datatype_fp32 ? 4 : dt == xnn_datatype_fp16 || dt == xnn_datatype_bf16 ? 2 : 1;
  const size_t bytes = nibbles ? (elements + 1) / 2 : elements * element_bytes;
  uint8_t* data = keep(p, bytes);
  if (data == NULL) return xnn_status_out_of_memory;
  /* canonical() repeats every 15 values, so the bytes repeat every 15 elements (every 30 nibbles): encode one
   * period and copy it forward. The probe runs once per family per process, before an app's first inference,
   * and encoding value by value cost as much as XNNPACK packing them. */
  const size_t period_elements = nibbles ? 30 : 15;
  const size_t period_bytes = nibbles ? 15 : 15 * element_bytes;
  const size_t encoded = elements < period_elements ? elements : period_elements;
  for (size_t i = 0; i < encoded; i++) {
    const int v = canonical(i, 1);
    switch (dt) {
      case xnn_datatype_fp32: xp_putf32(data + 4 * i, (float)v / 8.0f); break;
      case xnn_datatype_fp16: xp_put16(data + 2 * i, to_half((float)v / 8.0f)); break;
      case xnn_datatype_bf16: xp_put16(data + 2 * i, to_bf16((float)v / 8.0f)); break;
      case xnn_datatype_quint8: data[i] = (uint8_t)(120 + v); break;
      case xnn_datatype_qcint4:
      case xnn_datatype_qbint4: data[i / 2] |= (uint8_t)(((v + 8) & 15) << (4 * (i % 2))); break;
      default: data[i] = (uint8_t)(int8_t)v; break; /* qint8, qcint8 */
    }
  }
  for (size_t done = period_bytes; done < bytes;) { /* done stays a multiple of the period */
    const size_t n = done < bytes - done ? done : bytes - done;
    memcpy(data + done, data, n);
    done += n;
  }
  if (nibbles && elements % 2 == 1 && elements > period_elements) data[bytes - 1] &= 0x0f; /* no element there */
  switch (dt) {
    case xnn_datatype_fp32:
    case xnn_datatype_fp16:
    case xnn_datatype_bf16:
      return xnn_define_tensor_value(p->sg, dt, nd, dims, data, XNN_INVALID_VALUE_ID, 0, id);
    case xnn_datatype_qint8:
      return xnn_define_quantized_tensor_value(p->sg, dt, 0, FILTER_SCALE, nd, dims, data, XNN_INVALID_VALUE_ID, 0, id);
    case xnn_datatype_quint8:
      return xnn_define_quantized_tensor_value(p->sg, dt, 120, FILTER_SCALE, nd, dims, data, XNN_INVALID_VALUE_ID, 0,
                                               id);
    case xnn_datatype_qcint8:
    case xnn_datatype_qcint4: {
      float* scales = keep(p, channels * sizeof(float));
      if (scales == NULL) return xnn_status_out_of_memory;
      for (size_t c = 0; c < channels; c++) scales[c] = channel_scale(c);
      return xnn_define_channelwise_quantized_tensor_value_v2(p->sg, dt, dt == xnn_datatype_qcint4 ? 8 : 0, scales, nd,
                                                              channel_dim, dims, data, XNN_INVALID_VALUE_ID, 0, id);
    }
    case xnn_datatype_qbint4: {
      const size_t blocks = elements / p->f->block_size;
      uint16_t* scales = keep(p, blocks * sizeof(uint16_t));
      if (scales == NULL) return xnn_status_out_of_memory;
      for (size_t b = 0; b < blocks; b++) scales[b] = to_bf16(0.125f * (float)(1 + b % 3));
      return xnn_define_blockwise_quantized_tensor_value(p->sg, dt, 8, scales, nd, channel_dim, p->f->block_size, dims,
                                                         data, XNN_INVALID_VALUE_ID, 0, id);
    }
    default:
      return xnn_status_unsupported_parameter;
  }
}

static enum xnn_status define_bias(probe* p, size_t channels, uint32_t* id) {
  const enum xnn_datatype dt = p->f->bias;
  *id = XNN_INVALID_VALUE_ID;
  if (dt == xnn_datatype_invalid) return xnn_status_success;
  const size_t dims[1] = {channels};
  uint8_t* data = keep(p, channels * 4);
  if (data == NULL) return xnn_status_out_of_memory;
  for (size_t c = 0; c < channels; c++) {
    const int v = canonical(c, 2);
    if (dt == xnn_datatype_fp32) xp_putf32(data + 4 * c, (float)v / 4.0f);
    else if (dt == xnn_datatype_fp16) xp_put16(data + 2 * c, to_half((float)v / 4.0f));
    else xp_put32(data + 4 * c, (uint32_t)(int32_t)(v * 100));
  }
  switch (dt) {
    case xnn_datatype_qint32:
      return xnn_define_quantized_tensor_value(p->sg, dt, 0, INPUT_SCALE * FILTER_SCALE, 1, dims, data,
                                               XNN_INVALID_VALUE_ID, 0, id);
    case xnn_datatype_qcint32: {
      float* scales = keep(p, channels * sizeof(float));
      if (scales == NULL) return xnn_status_out_of_memory;
      for (size_t c = 0; c < channels; c++) scales[c] = INPUT_SCALE * channel_scale(c);
      return xnn_define_channelwise_quantized_tensor_value_v2(p->sg, dt, 0, scales, 1, 0, dims, data,
                                                              XNN_INVALID_VALUE_ID, 0, id);
    }
    default:
      return xnn_define_tensor_value(p->sg, dt, 1, dims, data, XNN_INVALID_VALUE_ID, 0, id);
  }
}

/* ---- the probe subgraph of each operator ---- */

/* Fully connected: 37 and 3 output channels (the second below every nr, so XNNPACK's configuration
 * for few output channels is probed too) over K input channels. */
static enum xnn_status define_fully_connected(probe* p) {
  const xpack_family* f = p->f;
  const size_t k = f->filter == xnn_datatype_qbint4 ? 2 * (size_t)f->block_size
                   : f->filter == xnn_datatype_qcint4 ? 30 : 29;
  static const size_t outputs[2] = {37, 3};
  for (size_t i = 0; i < 2; i++) {
    const size_t n = outputs[i];
    const size_t in_dims[2] = {2, k}, out_dims[2] = {2, n};
    const size_t w_dims[2] = {f->transpose ? k : n, f->transpose ? n : k};
    uint32_t x, w, b, y;
    TRY(define_input(p, 2, in_dims, &x));
    TRY(define_filter(p, 2, w_dims, f->transpose ? 1 : 0, &w));
    TRY(define_bias(p, n, &b));
    TRY(define_output(p, 2, out_dims, &y));
    TRY(xnn_define_fully_connected(p->sg, -INFINITY, INFINITY, x, w, b, y,
                                   f->transpose ? XNN_FLAG_TRANSPOSE_WEIGHTS : 0));
  }
  return xnn_status_success;
}

/* Convolution on a 5x5 image: 1x1 unpadded (XNNPACK's GEMM path), 3x3 padded (IGEMM path), and 3x3 with
 * 3 output channels (the configuration for few output channels). */
static enum xnn_status define_convolution(probe* p) {
  static const struct { size_t kernel, pad, in, out; } nodes[3] = {{1, 0, 29, 37}, {3, 1, 5, 37}, {3, 1, 5, 3}};
  for (size_t i = 0; i < 3; i++) {
    const size_t kk = nodes[i].kernel, pad = nodes[i].pad, c = nodes[i].in, n = nodes[i].out;
    const size_t in_dims[4] = {1, 5, 5, c}, w_dims[4] = {n, kk, kk, c}, out_dims[4] = {1, 5, 5, n};
    uint32_t x, w, b, y;
    TRY(define_input(p, 4, in_dims, &x));
    TRY(define_filter(p, 4, w_dims, 0, &w));
    TRY(define_bias(p, n, &b));
    TRY(define_output(p, 4, out_dims, &y));
    TRY(xnn_define_convolution_2d(p->sg, (uint32_t)pad, (uint32_t)pad, (uint32_t)pad, (uint32_t)pad, (uint32_t)kk,
                                  (uint32_t)kk, 1, 1, 1, 1, 1, c, n, -INFINITY, INFINITY, x, w, b, y, 0));
  }
  return xnn_status_success;
}

/* Deconvolution of a 3x3 image, 3x3 kernel, stride 2: 37 and 3 output channels. */
static enum xnn_status define_deconvolution(probe* p) {
  static const size_t outputs[2] = {37, 3};
  for (size_t i = 0; i < 2; i++) {
    const size_t c = 5, n = outputs[i];
    const size_t in_dims[4] = {1, 3, 3, c}, w_dims[4] = {n, 3, 3, c}, out_dims[4] = {1, 7, 7, n};
    uint32_t x, w, b, y;
    TRY(define_input(p, 4, in_dims, &x));
    TRY(define_filter(p, 4, w_dims, 0, &w));
    TRY(define_bias(p, n, &b));
    TRY(define_output(p, 4, out_dims, &y));
    TRY(xnn_define_deconvolution_2d(p->sg, 0, 0, 0, 0, 0, 0, 3, 3, 2, 2, 1, 1, 1, c, n, -INFINITY, INFINITY, x, w, b,
                                    y, 0));
  }
  return xnn_status_success;
}

/* Depthwise convolution on a 5x5 image, multiplier 1, filter [1, kh, kw, C]: 3x3 over 37 and over 3 channels
 * (wide and narrow channel tiling), and 5x5 over 37 (XNNPACK picks its depthwise kernels, and so their
 * packed layout, by the number of taps). */
static enum xnn_status define_depthwise_convolution(probe* p) {
  static const struct { size_t kernel, channels; } nodes[3] = {{3, 37}, {3, 3}, {5, 37}};
  for (size_t i = 0; i < 3; i++) {
    const size_t kk = nodes[i].kernel, pad = kk / 2, c = nodes[i].channels;
    const size_t in_dims[4] = {1, 5, 5, c}, w_dims[4] = {1, kk, kk, c}, out_dims[4] = {1, 5, 5, c};
    uint32_t x, w, b, y;
    TRY(define_input(p, 4, in_dims, &x));
    TRY(define_filter(p, 4, w_dims, 3, &w));
    TRY(define_bias(p, c, &b));
    TRY(define_output(p, 4, out_dims, &y));
    TRY(xnn_define_depthwise_convolution_2d(p->sg, (uint32_t)pad, (uint32_t)pad, (uint32_t)pad, (uint32_t)pad,
                                            (uint32_t)kk, (uint32_t)kk, 1, 1, 1, 1, 1, c, -INFINITY, INFINITY, x, w,
                                            b, y, 0));
  }
  return xnn_status_success;
}

xpack_status xp_probe_run(const xpack_family* family, xp_probe_result* out, xpack_error* err) {
  char name[XPACK_FAMILY_NAME_MAX];
  xpack_status st = xpack_family_format(family, name, sizeof name, NULL, err);
  if (st != XPACK_OK) return st;
  if ((st = xpack_initialize_xnnpack(err)) != XPACK_OK) return st;
  probe p;
  memset(&p, 0, sizeof p);
  p.f = family;
  capture c;
  memset(&c, 0, sizeof c);
  XXH3_64bits_reset(&c.hash);
  XXH3_64bits_reset(&c.keys);
  c.provider = (struct xnn_weights_cache_provider){
      .context = &c,
      .look_up = capture_look_up,
      .reserve_space = capture_reserve_space,
      .look_up_or_insert = capture_look_up_or_insert,
      .is_finalized = capture_is_finalized,
      .offset_to_addr = capture_offset_to_addr,
      .delete_cache = capture_delete_cache,
  };
  const char* stage = "define";
  enum xnn_status xs = xnn_create_subgraph(6, 0, &p.sg);
  if (xs == xnn_status_success) {
    switch (family->op) {
      case XPACK_OP_FULLY_CONNECTED: xs = define_fully_connected(&p); break;
      case XPACK_OP_CONVOLUTION_2D: xs = define_convolution(&p); break;
      case XPACK_OP_DECONVOLUTION_2D: xs = define_deconvolution(&p); break;
      case XPACK_OP_DEPTHWISE_CONVOLUTION_2D: xs = define_depthwise_convolution(&p); break;
      default: xs = xnn_status_unsupported_parameter; break;
    }
  }
  xnn_runtime_t runtime = NULL;
  if (xs == xnn_status_success) {
    stage = "create a runtime for";
    xs = xp_create_own_runtime(p.sg, &c.provider, NULL, &runtime);
  }
  if (runtime != NULL) xnn_delete_runtime(runtime);
  if (p.sg != NULL) xnn_delete_subgraph(p.sg);
  for (size_t i = 0; i < p.allocation_count; i++) free(p.allocations[i]);
  for (size_t i = 0; i < c.reserved_count; i++) free(c.reserved[i]);
  if (xs != xnn_status_success) {
    return xp_fail(err, xp_xnn_failure(xs), "XNNPACK cannot %s the probe of %s here (status %d: %s)", stage, name,
                   (int)xs, xp_xnn_status_text(xs));
  }
  if (c.failed || c.inserted_count == 0) {
    return xp_fail(err, XPACK_ERR_XNNPACK, "the probe of %s packed %s", name,
                   c.failed ? "more weights than expected" : "nothing");
  }
  out->hash = XXH3_64bits_digest(&c.hash);
  out->keys = XXH3_64bits_digest(&c.keys);
  if (out->keys == 0) out->keys = 1; /* 0 means "not recorded" in a file */
  return XPACK_OK;
}

/* ---- once per process ---- */

typedef struct memo {
  struct memo* next;
  char name[XPACK_FAMILY_NAME_MAX];
  xpack_status status;
  xp_probe_result result;
  char message[XPACK_ERROR_MESSAGE_SIZE];
} memo;

static pthread_mutex_t g_memo_lock = PTHREAD_MUTEX_INITIALIZER;
static memo* g_memos; /* never freed: one small record per family probed, bounded by the known families */

xpack_status xp_probe_family(const char* name, size_t len, xp_probe_result* out, xpack_error* err) {
  xpack_family family;
  xpack_status parsed = xpack_family_parse(name, len, &family, err);
  if (parsed != XPACK_OK) return parsed;
  pthread_mutex_lock(&g_memo_lock);
  memo* m = g_memos;
  while (m != NULL && !(strlen(m->name) == len && memcmp(m->name, name, len) == 0)) m = m->next;
  if (m == NULL && (m = calloc(1, sizeof *m)) != NULL) {
    memcpy(m->name, name, len);
    xpack_error e;
    m->status = xp_probe_run(&family, &m->result, &e);
    if (m->status != XPACK_OK) snprintf(m->message, sizeof m->message, "%s", e.message);
    m->next = g_memos;
    g_memos = m;
  }
  xpack_status st = m ? m->status : XPACK_ERR_NOMEM;
  const xp_probe_result result = m ? m->result : (xp_probe_result){0, 0};
  if (st != XPACK_OK) xp_fail(err, st, "%s", m ? m->message : "out of memory");
  if (m != NULL && st == XPACK_ERR_NOMEM) { /* says nothing of the family: probe it again next time */
    g_memos = m->next;
    free(m);
  }
  pthread_mutex_unlock(&g_memo_lock);
  if (st == XPACK_OK) *out = result;
  return st;
}
