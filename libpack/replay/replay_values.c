/* Defining a delegate's tensors (XNNGraph xvalues) the way ExecuTorch's XNNPACK backend does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "loader/xnn_compat.h"
#include "loader/bindings.h"
#include "replay/replay_internal.h"

void* xp_replay_scratch_alloc(xp_replay_state* s, size_t bytes) {
  if (bytes > SIZE_MAX - sizeof(xp_replay_scratch)) return NULL;
  xp_replay_scratch* block = malloc(sizeof *block + bytes);
  if (block == NULL) return NULL;
  block->next = s->scratch;
  s->scratch = block;
  return block->data;
}

enum xnn_datatype xp_replay_datatype(int serialized) {
  switch (serialized) { /* serialized numbers differ from enum xnn_datatype: mapped by name */
    case XPACK_ET_XNN_DT_FP32: return xnn_datatype_fp32;
    case XPACK_ET_XNN_DT_FP16: return xnn_datatype_fp16;
    case XPACK_ET_XNN_DT_QINT8: return xnn_datatype_qint8;
    case XPACK_ET_XNN_DT_QUINT8: return xnn_datatype_quint8;
    case XPACK_ET_XNN_DT_QINT32: return xnn_datatype_qint32;
    case XPACK_ET_XNN_DT_QCINT8: return xnn_datatype_qcint8;
    case XPACK_ET_XNN_DT_QCINT32: return xnn_datatype_qcint32;
    case XPACK_ET_XNN_DT_QCINT4: return xnn_datatype_qcint4;
    case XPACK_ET_XNN_DT_QDINT8: return xnn_datatype_qdint8;
    case XPACK_ET_XNN_DT_QBINT4: return xnn_datatype_qbint4;
    case XPACK_ET_XNN_DT_QPINT8: return xnn_datatype_qpint8;
    case XPACK_ET_XNN_DT_INT32: return xnn_datatype_int32;
    case XPACK_ET_XNN_DT_PFP32: return xnn_datatype_pfp32;
    case XPACK_ET_XNN_DT_BF16: return xnn_datatype_bf16;
    default: return xnn_datatype_invalid;
  }
}

size_t xp_replay_element_bits(int serialized) {
  switch (serialized) {
    case XPACK_ET_XNN_DT_FP16:
    case XPACK_ET_XNN_DT_BF16: return 16;
    case XPACK_ET_XNN_DT_QINT8:
    case XPACK_ET_XNN_DT_QUINT8:
    case XPACK_ET_XNN_DT_QCINT8:
    case XPACK_ET_XNN_DT_QDINT8:
    case XPACK_ET_XNN_DT_QPINT8: return 8;
    case XPACK_ET_XNN_DT_QCINT4:
    case XPACK_ET_XNN_DT_QBINT4: return 4;
    default: return 32;
  }
}

uint64_t xp_replay_tensor_bytes(const uint32_t* dims, uint32_t num_dims, int serialized) {
  const uint64_t most = UINT64_MAX / 64; /* elements: times any element's bits, still no wrap */
  const int four_bit = xp_replay_element_bits(serialized) == 4;
  const uint32_t counted = four_bit && num_dims > 0 ? num_dims - 1 : num_dims;
  uint64_t elements = 1;
  for (uint32_t d = 0; d < counted; d++) {
    if (dims[d] != 0 && elements > most / dims[d]) return UINT64_MAX;
    elements *= dims[d];
  }
  if (four_bit && num_dims > 0) {
    /* Rows of whole bytes: XNNPACK reads a 4-bit weight [output channels, input channels] row by row, an odd row
     * ending in half a byte of padding (xnn_pack_qs8_qc4w_gemm_goi_w), as ExecuTorch writes it. */
    const uint64_t row_bytes = ((uint64_t)dims[num_dims - 1] + 1) / 2;
    if (row_bytes != 0 && elements > most / row_bytes) return UINT64_MAX;
    return elements * row_bytes;
  }
  return (elements * xp_replay_element_bits(serialized) + 7) / 8;
}

/* fp32 to bf16 exactly as ExecuTorch's XNNPACK backend converts blockwise scales
 * (convertF32TensorToBF16): scale by 1.00389105f, then keep the high half. It is not c10::BFloat16's
 * round-to-nearest-even (a tie such as 1 + 2^-8 goes up here, to even there); any other rounding would
 * pack different bytes than ExecuTorch packs at run time, and a cache would then serve them. */
uint16_t xp_replay_bf16_as_executorch(float f) {
  const float adjusted = f * 1.00389105f;
  uint32_t bits;
  memcpy(&bits, &adjusted, sizeof bits);
  return (uint16_t)(bits >> 16);
}

/* Whether p may be read in place as an array of elements of this alignment. */
static int aligned_for(const void* p, size_t alignment) { return ((uintptr_t)p & (alignment - 1)) == 0; }

/* Resolves a constant, binds its identity, and returns its bytes (NULL for index 0). */
static xpack_status constant_of(xp_replay_state* s, uint32_t idx, const char* what, uint32_t value_index,
                                xpack_et_constant* c, xpack_error* err) {
  memset(c, 0, sizeof *c);
  if (idx == 0) return XPACK_OK;
  xpack_status st = xpack_et_xnn_resolve_constant(s->graph, idx, s->sources, c, err);
  if (st != XPACK_OK) return st;
  if (s->bind != NULL && c->data != NULL) {
    /* Room for any identity (xpack_executorch.h): the key, a content hash, the packing suffix. */
    char local[XP_MAX_IDENTITY + XPACK_ET_IDENTITY_MAX + XPACK_ET_PACKING_SUFFIX_SIZE];
    const size_t capacity = (c->named_key ? c->named_key_len : 0) + XPACK_ET_IDENTITY_MAX + XPACK_ET_PACKING_SUFFIX_SIZE;
    char* identity = capacity <= sizeof local ? local : malloc(capacity);
    if (identity == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", s->graph->name);
    size_t len = 0;
    bool ambiguous = false;
    /* A quantized weight's name holds what XNNPACK packs with it and its key does not (xpack_executorch.h). */
    st = xpack_et_weight_identity_of(s->graph, s->sources, idx, c, strcmp(what, "weight") != 0, identity,
                                     identity == local ? sizeof local : capacity, &len, &ambiguous, err);
    if (st != XPACK_OK) {
      if (identity != local) free(identity);
      if (err == NULL) return st;
      char cause[sizeof err->message]; /* xp_fail writes err->message: not its own argument */
      snprintf(cause, sizeof cause, "%s", err->message);
      return xp_fail(err, st, "%s: value %u: %s identity: %s", s->graph->name, value_index, what, cause);
    }
    /* Longer than any binding takes: it names nothing, as an ambiguous one, and XNNPACK packs it at load. */
    if (len > XPACK_IDENTITY_MAX_LEN) {
      ambiguous = true;
      if (!xp_replay_bound_before(s, c->data)) s->unnamed_long++; /* values sharing the pointer: one weight */
    }
    st = ambiguous ? xp_replay_bind(s, c->data, XPACK_IDENTITY_AMBIGUOUS, sizeof XPACK_IDENTITY_AMBIGUOUS - 1)
                   : xp_replay_bind(s, c->data, identity, len);
    if (identity != local) free(identity);
    if (st != XPACK_OK) return xp_fail(err, st, "%s: value %u: out of memory binding its %s", s->graph->name,
                                       value_index, what);
  }
  return XPACK_OK;
}

/* Per-channel scales: inline in the blob, or a constant (scale_buffer_idx). */
static xpack_status channel_scales(xp_replay_state* s, const xpack_et_xnn_value* v, size_t expected, const float** out,
                                   xpack_error* err) {
  const xpack_et_xnn_quant* q = &v->quant;
  if (q->scale_buffer_idx != 0) {
    xpack_et_constant c;
    xpack_status st = constant_of(s, q->scale_buffer_idx, "scale", v->index, &c, err);
    if (st != XPACK_OK) return st;
    if (expected > c.size / sizeof(float)) { /* not expected * 4: it wraps where size_t has 32 bits */
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u: scale constant has %zu bytes, expected %zu floats",
                     s->graph->name, v->index, c.size, expected);
    }
    /* Used in place, as ExecuTorch does, unless the constant is not 4-aligned. */
    if (aligned_for(c.data, _Alignof(float))) {
      *out = (const float*)(const void*)c.data;
      return XPACK_OK;
    }
    float* copy = xp_replay_scratch_alloc(s, expected * sizeof(float));
    if (copy == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
    memcpy(copy, c.data, expected * sizeof(float));
    *out = copy;
    return XPACK_OK;
  }
  if (q->scales == NULL || q->scale_count < expected) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u: %u per-channel scales, expected %zu", s->graph->name,
                   v->index, q->scales ? q->scale_count : 0, expected);
  }
  *out = q->scales;
  return XPACK_OK;
}

/* Blockwise (qbint4) scales as bf16: a bf16 constant is used in place as ExecuTorch uses it (copied only
 * when it is not 2-aligned); fp32 scales, in a constant or inline, are converted as ExecuTorch converts. */
static xpack_status block_scales(xp_replay_state* s, const xpack_et_xnn_value* v, size_t expected, const uint16_t** out,
                                 xpack_error* err) {
  const xpack_et_xnn_quant* q = &v->quant;
  const float* inline_scales = NULL;
  xpack_et_constant c = {0};
  if (q->scale_buffer_idx != 0) {
    xpack_status st = constant_of(s, q->scale_buffer_idx, "scale", v->index, &c, err);
    if (st != XPACK_OK) return st;
    /* In 64 bits: expected * 4 wraps where size_t has 32 bits, and a small constant would pass for 4 GiB of scales. */
    const int as_bf16 = (uint64_t)c.size == (uint64_t)expected * sizeof(uint16_t);
    const int as_fp32 = (uint64_t)c.size == (uint64_t)expected * sizeof(float);
    if (as_bf16 && aligned_for(c.data, _Alignof(uint16_t))) {
      *out = (const uint16_t*)(const void*)c.data;
      return XPACK_OK;
    }
    if (!as_bf16 && !as_fp32) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u: blockwise scale constant has %zu bytes, expected %zu "
                     "bf16 or fp32 scales", s->graph->name, v->index, c.size, expected);
    }
  } else {
    if (q->scales == NULL || q->scale_count < expected) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u: %u blockwise scales, expected %zu", s->graph->name,
                     v->index, q->scales ? q->scale_count : 0, expected);
    }
    inline_scales = q->scales;
  }
  uint16_t* bf = xp_replay_scratch_alloc(s, expected * sizeof(uint16_t));
  if (bf == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
  if (inline_scales != NULL) {
    for (size_t i = 0; i < expected; i++) bf[i] = xp_replay_bf16_as_executorch(inline_scales[i]);
  } else if ((uint64_t)c.size == (uint64_t)expected * sizeof(uint16_t)) {
    memcpy(bf, c.data, c.size);
  } else {
    for (size_t i = 0; i < expected; i++) {
      float f;
      memcpy(&f, c.data + 4 * i, sizeof f);
      bf[i] = xp_replay_bf16_as_executorch(f);
    }
  }
  *out = bf;
  return XPACK_OK;
}

/* v's size was bounded by xp_replay_check_value (XP_REPLAY_MAX_TENSOR_BYTES). */
static xpack_status note_external(xp_replay_state* s, const xpack_et_xnn_value* v, uint32_t id) {
  if (!(v->flags & (XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT | XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_OUTPUT))) return XPACK_OK;
  const size_t bytes = (size_t)xp_replay_tensor_bytes(v->dims, v->num_dims, v->datatype);
  xpack_replay_external* grown = realloc(s->externals, (s->num_externals + 1) * sizeof *grown);
  if (grown == NULL) return XPACK_ERR_NOMEM;
  s->externals = grown;
  s->externals[s->num_externals++] =
      (xpack_replay_external){id, (v->flags & XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT) != 0, bytes, v->datatype};
  return XPACK_OK;
}

xpack_status xp_replay_define_value(xp_replay_state* s, const xpack_et_xnn_value* v, xpack_error* err) {
  const char* name = s->graph->name;
  size_t dims[XNN_MAX_TENSOR_DIMS];
  if (v->num_dims > XNN_MAX_TENSOR_DIMS) {
    return xp_fail(err, XPACK_ERR_UNSUPPORTED, "%s: value %u has %u dims, XNNPACK takes at most %d", name, v->index,
                   v->num_dims, XNN_MAX_TENSOR_DIMS);
  }
  for (uint32_t i = 0; i < v->num_dims; i++) dims[i] = v->dims[i];
  enum xnn_datatype dt = xp_replay_datatype(v->datatype);
  if (v->datatype == XPACK_ET_XNN_DT_INVALID) {
    /* A file's own "invalid": malformed, where a number past the known ones may be a newer exporter's type. */
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u: datatype invalid (0), expected a tensor datatype", name,
                   v->index);
  }
  if (dt == xnn_datatype_invalid) {
    return xp_fail(err, XPACK_ERR_UNSUPPORTED, "%s: value %u: datatype %s (%d) cannot be defined", name, v->index,
                   v->datatype_name, v->datatype);
  }
  const int external = (v->flags & (XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT | XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_OUTPUT)) != 0;
  const uint32_t external_id = external ? v->external_id : XNN_INVALID_VALUE_ID;
  const uint32_t flags = v->flags & (XNN_VALUE_FLAG_EXTERNAL_INPUT | XNN_VALUE_FLAG_EXTERNAL_OUTPUT);
  xpack_et_constant c;
  xpack_status st = constant_of(s, v->constant_buffer_idx, "weight", v->index, &c, err);
  /* Also a constant of 0 bytes (its data is NULL): defined with no data, it would be a dynamic value nothing
   * writes, packed from whatever XNNPACK finds there (a filter [16, 0] divided by zero in XNNPACK's reshape). */
  if (st == XPACK_OK && v->constant_buffer_idx != 0) st = xp_replay_check_constant_size(s, v, c.size, err);
  if (st != XPACK_OK) return st;
  uint32_t id = XNN_INVALID_VALUE_ID;
  enum xnn_status xs = xnn_status_success;
  const xpack_et_xnn_quant* q = &v->quant;
  xp_replay_quant_scales given = {NULL, NULL, 0}; /* for the refusal's explanation */
  switch (q->kind) {
    case XPACK_ET_XNN_QUANT_NONE:
      xs = xnn_define_tensor_value(s->subgraph, dt, v->num_dims, dims, c.data, external_id, flags, &id);
      if (xs == xnn_status_success && v->dq_datatype == XPACK_ET_XNN_DT_QINT8 && dt == xnn_datatype_fp32 &&
          (v->flags & XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT)) {
        /* Legacy dynamic quantization marker: an internal qdint8 value fed by a convert node. */
        uint32_t qid = XNN_INVALID_VALUE_ID;
        st = note_external(s, v, id);
        if (st != XPACK_OK) return xp_fail(err, st, "out of memory");
        xs = xnn_define_dynamically_quantized_tensor_value(s->subgraph, xnn_datatype_qdint8, v->num_dims, 1, dims,
                                                           XNN_INVALID_VALUE_ID, 0, &qid);
        if (xs == xnn_status_success) xs = xnn_define_unary(s->subgraph, xnn_unary_convert, NULL, id, qid, 0);
        if (xs != xnn_status_success) break;
        if (xp_replay_note_value(s, id, dt, NULL, 0) != XPACK_OK || xp_replay_note_value(s, qid, xnn_datatype_qdint8, NULL, 0)) {
          return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
        }
        return xp_replay_map_id(s, v->id_out, qid, err);
      }
      break;
    case XPACK_ET_XNN_QUANT_PER_TENSOR:
      /* XNNPACK 4ea82e5 defines a channelwise or blockwise datatype with one scale too, then reads that scale as
       * the pointer to per-channel scales, or divides by its block size of 0 (found by a review: SIGSEGV, SIGFPE). */
      if (dt != xnn_datatype_qint8 && dt != xnn_datatype_quint8 && dt != xnn_datatype_qint32) {
        return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u: per-tensor quantization of a %s tensor, expected "
                       "qint8, quint8 or qint32 (per-channel and blockwise datatypes take their own quantization)",
                       name, v->index, v->datatype_name);
      }
      xs = xnn_define_quantized_tensor_value(s->subgraph, dt, q->zero_point, q->scale, v->num_dims, dims, c.data,
                                             external_id, flags, &id);
      break;
    case XPACK_ET_XNN_QUANT_PER_CHANNEL: {
      if (q->channel_dim < 0 || (uint32_t)q->channel_dim >= v->num_dims) {
        return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u: channel_dim %d outside its %u dims", name, v->index,
                       q->channel_dim, v->num_dims);
      }
      const float* scales = NULL;
      st = channel_scales(s, v, dims[q->channel_dim], &scales, err);
      if (st != XPACK_OK) return st;
      given = (xp_replay_quant_scales){scales, NULL, dims[q->channel_dim]};
      const int32_t zero_point = v->datatype == XPACK_ET_XNN_DT_QCINT4 ? 8 : 0;
      xs = xnn_define_channelwise_quantized_tensor_value_v2(s->subgraph, dt, zero_point, scales, v->num_dims,
                                                            (size_t)q->channel_dim, dims, c.data, external_id, flags,
                                                            &id);
      break;
    }
    case XPACK_ET_XNN_QUANT_PER_CHANNEL_GROUP: {
      if (v->num_dims != 2 || q->group_size <= 0 || q->channel_dim != 0 || dims[1] % (size_t)q->group_size != 0) {
        return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u: blockwise quantization needs 2 dims, channel_dim 0 "
                       "and a group size dividing the input channels (dims %u, group %d)",
                       name, v->index, v->num_dims, q->group_size);
      }
      const uint16_t* scales = NULL;
      st = block_scales(s, v, dims[0] * dims[1] / (size_t)q->group_size, &scales, err);
      if (st != XPACK_OK) return st;
      given = (xp_replay_quant_scales){NULL, scales, dims[0] * dims[1] / (size_t)q->group_size};
      xs = xnn_define_blockwise_quantized_tensor_value(s->subgraph, dt, 8, scales, v->num_dims, 0,
                                                       (size_t)q->group_size, dims, c.data, external_id, flags, &id);
      break;
    }
    case XPACK_ET_XNN_QUANT_PER_TOKEN_DYNAMIC:
      xs = xnn_define_dynamically_quantized_tensor_value(s->subgraph, dt, v->num_dims, (size_t)q->num_nonbatch_dims,
                                                         dims, external_id, flags, &id);
      break;
  }
  if (xs == xnn_status_invalid_parameter && xp_replay_explain_quant_refusal(name, v, dt, &given, err) != XPACK_OK) {
    return XPACK_ERR_BAD_INPUT;
  }
  if (xs != xnn_status_success) {
    return xp_fail(err, xp_replay_define_refusal(xs), "%s: value %u (%s, %u dims): XNNPACK refused to define it (status %d: %s)",
                   name, v->index, v->datatype_name, v->num_dims, (int)xs, xp_xnn_status_text(xs));
  }
  st = note_external(s, v, id);
  if (st == XPACK_OK) {
    const uint32_t block = q->kind == XPACK_ET_XNN_QUANT_PER_CHANNEL_GROUP ? (uint32_t)q->group_size : 0;
    st = xp_replay_note_value(s, id, dt, c.data, block);
  }
  if (st != XPACK_OK) return xp_fail(err, st, "out of memory");
  return xp_replay_map_id(s, v->id_out, id, err);
}
