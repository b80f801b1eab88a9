/* How XNNPACK packs a weight, beyond its bytes (xpack_et_packing_suffix, xpack_executorch.h).
 *
 * XNNPACK's weights-cache key is (seed, kernel pointer, bias pointer), and its seed is an XOR of a few sizes and
 * tiling numbers: an FC of [8, 17] and one of [17, 8] give the same seed, and so can a convolution and an FC
 * (found by a review on 2026-11-28: the same bytes in both shapes were served each other's packing). A quantized
 * weight's packing also holds its scales (per channel or per block), and for a node whose input is quantized
 * statically, the requantization scales (input scale x weight scale / output scale) and the bias with the input
 * zero point folded in. None of that is in the key, so a weight's name must hold it: named by its bytes alone, a
 * weight in another shape, another node, quantized otherwise or under recalibrated activations would be served
 * another packing. */
#include <stdlib.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "common/error.h"
#include "et/et_internal.h"
#include "et/xnn_graph_internal.h"

static const char kSuffixPrefix[] = XPACK_ET_PACKING_SUFFIX_PREFIX;

static void add_u32(XXH3_state_t* h, uint32_t v) {
  const uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  XXH3_128bits_update(h, b, sizeof b);
}

static void add_float(XXH3_state_t* h, float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  add_u32(h, bits);
}

static int is_static_quantized(const xpack_et_xnn_value* v) {
  return v != NULL && v->quant.kind == XPACK_ET_XNN_QUANT_PER_TENSOR &&
         (v->datatype == XPACK_ET_XNN_DT_QINT8 || v->datatype == XPACK_ET_XNN_DT_QUINT8);
}

/* The weight's own quantization: kind, datatype, zero point and scale (per tensor), channel dim and group size,
 * and the scales (the identity of their constant, or their inline bytes). */
static xpack_status add_weight(XXH3_state_t* h, const xpack_et_xnn_graph* g, const xpack_et_named_sources* src,
                               const xpack_et_xnn_value* v, xpack_error* err) {
  const xpack_et_xnn_quant* q = &v->quant;
  add_u32(h, (uint32_t)q->kind);
  add_u32(h, (uint32_t)(uint16_t)v->datatype);
  add_u32(h, (uint32_t)q->zero_point);
  add_float(h, q->scale);
  add_u32(h, (uint32_t)q->channel_dim);
  add_u32(h, (uint32_t)q->group_size);
  if (q->scale_buffer_idx != 0) {
    /* Their identity, as a weight's: a content key, or the module path and a hash of the bytes. */
    xpack_et_constant c;
    xpack_status st = xpack_et_xnn_resolve_constant(g, q->scale_buffer_idx, src, &c, err);
    if (st != XPACK_OK) return st;
    const size_t cap = (c.named_key ? c.named_key_len : 0) + XPACK_ET_IDENTITY_MAX;
    char* identity = malloc(cap);
    if (identity == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", g->name);
    size_t len = 0;
    st = xpack_et_constant_identity_of(src, &c, identity, cap, &len, err);
    if (st == XPACK_OK) {
      add_u32(h, 1);
      XXH3_128bits_update(h, identity, len);
    }
    free(identity);
    if (st != XPACK_OK) return st;
  } else {
    add_u32(h, 3);
    add_u32(h, q->scale_count);
    if (q->scales != NULL && q->scale_count != 0) XXH3_128bits_update(h, q->scales, (size_t)q->scale_count * sizeof(float));
  }
  return XPACK_OK;
}

/* A value's datatype, and its scale and zero point when it is quantized statically (they are folded into the
 * packed bias and requantization scales); 0 for no value. */
static void add_activation(XXH3_state_t* h, const xpack_et_xnn_value* v) {
  if (v == NULL) {
    add_u32(h, 0);
    return;
  }
  add_u32(h, 1);
  add_u32(h, (uint32_t)(uint16_t)v->datatype);
  add_u32(h, (uint32_t)(uint16_t)v->dq_datatype); /* the legacy dynamic-quantization marker: qd8, not f32 */
  add_u32(h, (uint32_t)is_static_quantized(v));
  if (is_static_quantized(v)) {
    add_u32(h, (uint32_t)v->quant.zero_point);
    add_float(h, v->quant.scale);
  }
}

/* The node that packs the weight: its type, the parameters that shape the packing (all a convolution has but
 * its clamp: XNNPACK chooses gemm or igemm and the packing layout from kernel size, padding and stride), its
 * flags (transposed weights), and its input's and output's datatypes and static quantization. */
static void add_node(XXH3_state_t* h, const xpack_et_xnn_graph* g, const xpack_et_xnn_node* n) {
  add_u32(h, n->type);
  uint32_t input_id, output_id;
  if (n->type == XPACK_ET_XNN_FULLY_CONNECTED) {
    add_u32(h, n->u.fully_connected.flags);
    input_id = n->u.fully_connected.input1_id, output_id = n->u.fully_connected.output_id;
  } else {
    const uint32_t params[] = {n->u.conv.padding_top, n->u.conv.padding_right, n->u.conv.padding_bottom,
                               n->u.conv.padding_left, n->u.conv.kernel_height, n->u.conv.kernel_width,
                               n->u.conv.subsampling_height, n->u.conv.subsampling_width, n->u.conv.dilation_height,
                               n->u.conv.dilation_width, n->u.conv.group_input_channels,
                               n->u.conv.group_output_channels, n->u.conv.groups, n->u.conv.adjustment_height,
                               n->u.conv.adjustment_width, n->u.conv.flags};
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) add_u32(h, params[i]);
    input_id = n->u.conv.input1_id, output_id = n->u.conv.output_id;
  }
  add_activation(h, xpack_et_xnn_graph_find_value(g, input_id));
  add_activation(h, xpack_et_xnn_graph_find_value(g, output_id));
}

/* The weight value v alone: its datatype, dims and quantization. Each use by a node continues from this state. */
static xpack_status value_state(const xpack_et_xnn_graph* g, const xpack_et_named_sources* src,
                                const xpack_et_xnn_value* v, XXH3_state_t* h, xpack_error* err) {
  XXH3_128bits_reset(h);
  xpack_status st = add_weight(h, g, src, v, err);
  if (st != XPACK_OK) return st;
  add_u32(h, v->num_dims);
  for (uint32_t i = 0; i < v->num_dims; i++) add_u32(h, v->dims[i]);
  return XPACK_OK;
}

/* One use of the weight value v (its state from value_state) by node n (NULL: v alone). */
static XXH128_hash_t use_hash(const xpack_et_xnn_graph* g, const XXH3_state_t* value, const xpack_et_xnn_node* n) {
  XXH3_state_t h;
  XXH3_copyState(&h, value);
  add_u32(&h, n != NULL);
  if (n != NULL) add_node(&h, g, n);
  return XXH3_128bits_digest(&h);
}

/* The suffix of the class of values `values` (value_count of them), computed. */
static xpack_status compute_suffix(const xpack_et_xnn_graph* graph, const xpack_et_named_sources* sources,
                                   const uint32_t* values, size_t value_count, xp_suffix_memo* out, xpack_error* err) {
  *out = (xp_suffix_memo){0};
  bool seen = false;
  XXH128_hash_t first = {0, 0};
  /* Every value whose constant is these bytes: XNNPACK is handed one pointer for all of them (two entries of a
   * blob may name one key), and the pointer is what its key holds. Each is used alone, or by the nodes packing
   * it (weight_uses.c). */
  for (size_t i = 0; i < value_count && !out->ambiguous; i++) {
    const xpack_et_xnn_value* v = &graph->values[values[i]];
    XXH3_state_t state;
    const xpack_status st = value_state(graph, sources, v, &state, err);
    if (st != XPACK_OK) return st;
    const uint32_t* users;
    size_t user_count;
    xp_xnn_graph_filter_users(graph, v, &users, &user_count);
    for (size_t u = 0; u == 0 || u < user_count; u++) {
      const XXH128_hash_t use = use_hash(graph, &state, user_count ? &graph->nodes[users[u]] : NULL);
      if (seen && !XXH128_isEqual(use, first)) out->ambiguous = true;
      if (!seen) first = use;
      seen = true;
    }
  }
  out->known = true;
  if (out->ambiguous || !seen) return XPACK_OK;
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, first);
  memcpy(out->suffix, kSuffixPrefix, sizeof kSuffixPrefix - 1);
  xp_et_hex(canonical.digest, sizeof canonical.digest, out->suffix + sizeof kSuffixPrefix - 1);
  return XPACK_OK;
}

xpack_status xpack_et_packing_suffix(const xpack_et_xnn_graph* graph, const xpack_et_named_sources* sources,
                                     uint32_t constant_idx, char* suffix, bool* ambiguous, xpack_error* err) {
  if (graph == NULL || suffix == NULL || ambiguous == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_et_packing_suffix: NULL argument");
  }
  suffix[0] = '\0';
  *ambiguous = false;
  if (constant_idx == 0) return XPACK_OK;
  const uint32_t* values;
  size_t value_count;
  xp_xnn_graph_values_with_bytes(graph, constant_idx, &values, &value_count);
  if (value_count == 0) return XPACK_OK;
  xp_xnn_graph* g = (xp_xnn_graph*)xp_xnn_graph_impl(graph); /* the memo is the graph's cache, not its contents */
  const size_t class_at = (size_t)(values - g->by_bytes);
  xpack_status st = XPACK_OK;
  pthread_mutex_lock(&g->suffix_lock);
  xp_suffix_memo computed;
  xp_suffix_memo* memo = g->suffixes ? &g->suffixes[class_at] : &computed; /* none: computed each time */
  /* compute_suffix leaves the memo unknown when it fails: nothing is remembered then */
  if (memo == &computed || !memo->known) st = compute_suffix(graph, sources, values, value_count, memo, err);
  if (st == XPACK_OK) {
    *ambiguous = memo->ambiguous;
    memcpy(suffix, memo->suffix, sizeof memo->suffix);
  }
  pthread_mutex_unlock(&g->suffix_lock);
  return st;
}

xpack_status xpack_et_weight_identity_of(const xpack_et_xnn_graph* graph, const xpack_et_named_sources* sources,
                                         uint32_t constant_idx, const xpack_et_constant* c, bool is_scale, char* out,
                                         size_t out_size, size_t* out_len, bool* ambiguous, xpack_error* err) {
  if (out == NULL || out_size < XPACK_ET_PACKING_SUFFIX_SIZE || ambiguous == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_et_weight_identity_of: NULL output, or no room for a suffix");
  }
  char suffix[XPACK_ET_PACKING_SUFFIX_SIZE] = "";
  *ambiguous = false;
  size_t len = 0;
  xpack_status st = xpack_et_constant_identity_of(sources, c, out, out_size - sizeof suffix, &len, err);
  if (st == XPACK_OK && !is_scale) st = xpack_et_packing_suffix(graph, sources, constant_idx, suffix, ambiguous, err);
  if (st != XPACK_OK) return st;
  const size_t suffix_len = strlen(suffix);
  memcpy(out + len, suffix, suffix_len + 1);
  if (out_len) *out_len = len + suffix_len;
  return XPACK_OK;
}
