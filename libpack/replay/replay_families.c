/* Which packing family each static filter of a replayed delegate belongs to: the datatypes XNNPACK sees
 * for the node's input, filter, bias and output (after the replay's own conversions, e.g. the legacy
 * dynamic-quantization marker becomes a qdint8 value) and the layout flags. */
#include <stdlib.h>
#include <string.h>

#include "replay/replay_internal.h"

xpack_status xp_replay_note_value(xp_replay_state* s, uint32_t id, enum xnn_datatype datatype, const void* data,
                                  uint32_t block_size) {
  if (id == XNN_INVALID_VALUE_ID) return XPACK_OK;
  if (id >= s->value_info_capacity) {
    size_t cap = s->value_info_capacity ? s->value_info_capacity : 64;
    while (cap <= id) cap *= 2;
    xp_replay_value_info* grown = realloc(s->value_info, cap * sizeof *grown);
    if (grown == NULL) return XPACK_ERR_NOMEM;
    memset(grown + s->value_info_capacity, 0, (cap - s->value_info_capacity) * sizeof *grown);
    s->value_info = grown;
    s->value_info_capacity = cap;
  }
  s->value_info[id] = (xp_replay_value_info){datatype, data, block_size};
  return XPACK_OK;
}

static xp_replay_value_info info_of(const xp_replay_state* s, uint32_t id) {
  if (id == XNN_INVALID_VALUE_ID || id >= s->value_info_capacity) {
    return (xp_replay_value_info){xnn_datatype_invalid, NULL, 0};
  }
  return s->value_info[id];
}

xpack_status xp_replay_note_family(xp_replay_state* s, xpack_family_op op, uint32_t node, uint32_t input, uint32_t filter,
                                   uint32_t bias, uint32_t output, uint32_t flags) {
  const xp_replay_value_info w = info_of(s, filter);
  if (w.data == NULL) return XPACK_OK; /* a dynamic filter: XNNPACK packs nothing ahead */
  if (s->family_count == s->family_capacity) {
    size_t cap = s->family_capacity ? s->family_capacity * 2 : 16;
    xpack_replay_weight_family* grown = realloc(s->families, cap * sizeof *grown);
    if (grown == NULL) return XPACK_ERR_NOMEM;
    s->families = grown;
    s->family_capacity = cap;
  }
  xpack_family f;
  memset(&f, 0, sizeof f);
  f.op = op;
  f.input = info_of(s, input).datatype;
  f.filter = w.datatype;
  f.bias = info_of(s, bias).datatype; /* xnn_datatype_invalid without a bias */
  f.output = info_of(s, output).datatype;
  f.block_size = w.datatype == xnn_datatype_qbint4 ? w.block_size : 0;
  f.transpose = op == XPACK_OP_FULLY_CONNECTED && (flags & XNN_FLAG_TRANSPOSE_WEIGHTS) != 0;
  s->families[s->family_count++] = (xpack_replay_weight_family){w.data, f, node};
  return XPACK_OK;
}
