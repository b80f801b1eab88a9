/* Semantic checks of an XNNGraph that XNNPACK's define calls do not make but its packing and fusion rely
 * on: a graph that passes the flatbuffer reader can still ask XNNPACK to pack more channels than the
 * filter holds (a read past the weights) or carry value flags that make XNNPACK's fusion abort. */
#include <inttypes.h>

#include "common/error.h"
#include "replay/replay_internal.h"

xpack_status xp_replay_check_value(const xp_replay_state* s, const xpack_et_xnn_value* v, xpack_error* err) {
  const uint32_t known = XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT | XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
  if ((v->flags & ~known) != 0) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: value %u: flags 0x%x has bits other than external input (1) and "
                      "external output (2)", s->graph->name, v->index, (unsigned)v->flags);
  }
  return XPACK_OK;
}

static const xpack_et_xnn_value* value_of(const xp_replay_state* s, uint32_t serialized) {
  return serialized == XNN_INVALID_VALUE_ID ? NULL : xpack_et_xnn_graph_find_value(s->graph, serialized);
}

/* Filter layout is OHWI for convolution and deconvolution ([groups x group_output_channels, kh, kw,
 * group_input_channels]) and 1HWO for depthwise ([1, kh, kw, groups x multiplier]); XNNPACK packs
 * exactly that many elements from the filter's bytes, so the node's arithmetic must match the dims. */
xpack_status xp_replay_check_conv(const xp_replay_state* s, const xpack_et_xnn_node* n, xpack_error* err) {
  const __typeof__(n->u.conv)* c = &n->u.conv;
  const uint64_t groups = c->groups, gic = c->group_input_channels, goc = c->group_output_channels;
  uint64_t expect[4];
  const char* layout;
  if (n->type == XPACK_ET_XNN_DEPTHWISE_CONV2D) {
    if (gic == 0 || goc % gic != 0) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): group_output_channels %" PRIu64
                        " is not a multiple of group_input_channels %" PRIu64, s->graph->name, n->index,
                        n->type_name, goc, gic);
    }
    expect[0] = 1, expect[1] = c->kernel_height, expect[2] = c->kernel_width, expect[3] = groups * (goc / gic);
    layout = "[1, kernel_height, kernel_width, groups x group_output_channels / group_input_channels]";
  } else {
    expect[0] = groups * goc, expect[1] = c->kernel_height, expect[2] = c->kernel_width, expect[3] = gic;
    layout = "[groups x group_output_channels, kernel_height, kernel_width, group_input_channels]";
  }
  const xpack_et_xnn_value* w = value_of(s, c->filter_id);
  if (w == NULL) return XPACK_OK; /* an undefined id is reported by the define step */
  int ok = w->num_dims == 4;
  for (uint32_t d = 0; ok && d < 4; d++) ok = w->dims[d] == expect[d];
  if (!ok) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): filter value %u has dims that do not match the "
                      "node's groups %" PRIu64 ", group_input_channels %" PRIu64 ", group_output_channels %" PRIu64
                      " and kernel %ux%u (expected %s)", s->graph->name, n->index, n->type_name, w->index, groups, gic,
                      goc, (unsigned)c->kernel_height, (unsigned)c->kernel_width, layout);
  }
  const xpack_et_xnn_value* b = value_of(s, c->bias_id);
  if (b != NULL) {
    uint64_t numel = 1;
    for (uint32_t d = 0; d < b->num_dims; d++) numel *= b->dims[d];
    const uint64_t channels = n->type == XPACK_ET_XNN_DEPTHWISE_CONV2D ? expect[3] : expect[0];
    if (numel != channels) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: node %u (%s): bias value %u has %" PRIu64
                        " elements, the node has %" PRIu64 " output channels", s->graph->name, n->index,
                        n->type_name, b->index, numel, channels);
    }
  }
  return XPACK_OK;
}

xpack_status xpack_replay_check_externals(xnn_runtime_t runtime, const xpack_replay_subgraph* replay,
                                         xpack_error* err) {
  for (uint32_t i = 0; i < replay->num_externals; i++) {
    const xpack_replay_external* e = &replay->externals[i];
    size_t dims[XNN_MAX_TENSOR_DIMS];
    size_t num_dims = 0;
    if (xnn_get_external_value_shape(runtime, e->id, &num_dims, dims) != xnn_status_success) {
      return xp_fail(err, XPACK_ERR_XNNPACK, "external value %u: XNNPACK reports no shape", (unsigned)e->id);
    }
    uint64_t numel = 1;
    for (size_t d = 0; d < num_dims; d++) numel *= dims[d];
    const uint64_t bytes = (numel * xp_replay_element_bits(e->datatype) + 7) / 8;
    if (bytes != e->bytes) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "external %s value %u: its declared dims give %zu bytes, XNNPACK's "
                        "reshape gives %" PRIu64, e->is_input ? "input" : "output", (unsigned)e->id, e->bytes, bytes);
    }
  }
  return XPACK_OK;
}
