/* libFuzzer harness: arbitrary bytes as an XNNPACK delegate blob (XH00 header or bare XN00/XN01
 * flatbuffer); on success every value's constant and scale index is resolved and identified. */
#include <stddef.h>
#include <stdint.h>

#include "xpack_executorch.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  xpack_error err;
  xpack_et_xnn_graph* g = NULL;
  if (xpack_et_xnn_graph_parse(data, size, "fuzz blob", &g, &err) != XPACK_OK) return 0;
  for (size_t i = 0; i < g->value_count; i++) {
    uint32_t idx[2] = {g->values[i].constant_buffer_idx, g->values[i].quant.scale_buffer_idx};
    for (int k = 0; k < 2; k++) {
      xpack_et_constant c;
      if (xpack_et_xnn_resolve_constant(g, idx[k], NULL, &c, &err) != XPACK_OK) continue;
      char id[XPACK_ET_IDENTITY_MAX + 256];
      (void)xpack_et_constant_identity(c.data, c.size, c.named_key, c.named_key_len, id, sizeof id, NULL, &err);
    }
  }
  for (size_t i = 0; i < g->node_count; i++) {
    size_t count = 0;
    (void)xpack_et_xnn_layout_fields(g->nodes[i].layout, &count);
  }
  xpack_et_xnn_graph_free(g);
  return 0;
}
