/* Why XNNPACK refused to define a quantized value: its refusal says "invalid parameter" and names neither the field
 * nor the channel, so an engineer with a crafted or broken export had to guess which of a value's hundreds of scales
 * was zero. The zero point and scales are checked as XNNPACK's define checks them, once it has refused: checked
 * before, every load would pass over every scale twice (a 4-bit LLM's block scales are tens of millions). */
#include <math.h>
#include <string.h>

#include "common/error.h"
#include "replay/replay_internal.h"

/* XNNPACK takes a scale as a positive, normal float: zero, a subnormal, a negative scale, an infinity or a NaN
 * is refused. */
static bool scale_usable(float scale) { return scale > 0.0f && isnormal(scale); }

static xpack_status check_zero_point(const char* graph, const xpack_et_xnn_value* v, enum xnn_datatype datatype,
                                     int32_t zero_point, xpack_error* err) {
  int32_t low = 0, high = 0;
  switch (datatype) {
    case xnn_datatype_qint8: low = -128, high = 127; break;
    case xnn_datatype_quint8: low = 0, high = 255; break;
    default: break; /* qint32 and the per-channel datatypes: 0 */
  }
  if (zero_point >= low && zero_point <= high) return XPACK_OK;
  return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u (%s): zero_point %d, expected %d to %d", graph, v->index,
                 v->datatype_name, zero_point, low, high);
}

static xpack_status check_scales(const char* graph, const xpack_et_xnn_value* v, const char* what,
                                 const float* scales, size_t count, xpack_error* err) {
  for (size_t i = 0; i < count; i++) {
    if (scale_usable(scales[i])) continue;
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u (%s): %s %zu of %zu is %g, expected a positive, normal "
                   "float", graph, v->index, v->datatype_name, what, i, count, (double)scales[i]);
  }
  return XPACK_OK;
}

static xpack_status check_bf16_scales(const char* graph, const xpack_et_xnn_value* v, const uint16_t* scales,
                                      size_t count, xpack_error* err) {
  for (size_t i = 0; i < count; i++) {
    const uint32_t bits = (uint32_t)scales[i] << 16;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    if (scale_usable(scale)) continue;
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u (%s): blockwise scale %zu of %zu is %g (bf16 0x%04x), "
                   "expected a positive, normal float", graph, v->index, v->datatype_name, i, count, (double)scale,
                   (unsigned)scales[i]);
  }
  return XPACK_OK;
}

xpack_status xp_replay_explain_quant_refusal(const char* graph, const xpack_et_xnn_value* v, enum xnn_datatype datatype,
                                             const xp_replay_quant_scales* given, xpack_error* err) {
  const xpack_et_xnn_quant* q = &v->quant;
  switch (q->kind) {
    case XPACK_ET_XNN_QUANT_PER_TENSOR: {
      const xpack_status st = check_zero_point(graph, v, datatype, q->zero_point, err);
      return st != XPACK_OK ? st : check_scales(graph, v, "scale", &q->scale, 1, err);
    }
    case XPACK_ET_XNN_QUANT_PER_CHANNEL:
      return given->channel ? check_scales(graph, v, "per-channel scale", given->channel, given->count, err) : XPACK_OK;
    case XPACK_ET_XNN_QUANT_PER_CHANNEL_GROUP:
      return given->block ? check_bf16_scales(graph, v, given->block, given->count, err) : XPACK_OK;
    default:
      return XPACK_OK;
  }
}
