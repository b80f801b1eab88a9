/* Asking for the constants a replay will read, all at once, before it reads the first: those whose identities
 * hash their bytes, and quantization scales, which the definition reads whether the cache serves or not. */
#include <stdbool.h>

#include "replay/replay_internal.h"

static void ask_for(const xp_replay_state* s, uint32_t idx, bool read_anyway) {
  if (idx == 0) return;
  xpack_et_constant c;
  /* A constant that does not resolve fails later, with the replay's message; here it is only not asked for. */
  if (xpack_et_xnn_resolve_constant(s->graph, idx, s->sources, &c, NULL) != XPACK_OK || c.data == NULL) return;
  if (!read_anyway && !xpack_et_identity_reads_bytes(c.named_key, c.named_key ? c.named_key_len : 0)) return;
  xpack_et_read_ahead(s->sources, c.data, c.size);
}

void xp_replay_read_ahead(const xp_replay_state* s) {
  if (!xpack_et_reads_on_demand(s->sources)) return; /* nothing to ask for: not worth resolving the constants */
  const bool hashing = s->bind != NULL; /* identities are made only for a bind callback */
  for (size_t i = 0; i < s->graph->value_count; i++) {
    const xpack_et_xnn_value* v = &s->graph->values[i];
    if (hashing) ask_for(s, v->constant_buffer_idx, false);
    ask_for(s, v->quant.scale_buffer_idx, true);
  }
}
