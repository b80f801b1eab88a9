/* Asking XNNPACK how many bytes it reads for each packed weight (xpack_replay_size_weights).
 *
 * XNNPACK's weights-cache key names a weight (a seed and two pointers) but not its size, and on a hit
 * XNNPACK reads as many bytes as it computes from the operator, whatever the cache claims. A loader that
 * serves a region shorter than that lets XNNPACK read past it. So each node that packs a static filter is
 * defined alone (its own values, and the Convert that quantizes its input at run time) in a subgraph of its
 * own, and a runtime is created over a provider that misses every look-up and refuses the space XNNPACK
 * then reserves: XNNPACK has computed the key and the packed size by then, reports both, and gives up
 * before it packs or reads a weight byte. */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "replay/replay_internal.h"

typedef struct sizer {
  struct xnn_weights_cache_provider provider;
  struct xnn_weights_cache_look_up_key pending;
  bool has_pending;
  xpack_size_fn report;
  void* context;
} sizer;

static size_t sizer_look_up(void* context, const struct xnn_weights_cache_look_up_key* key) {
  sizer* z = context;
  z->pending = *key;
  z->has_pending = true;
  return SIZE_MAX;
}

/* XNNPACK reserves right after the look-up that missed, for that key. A reserve without a look-up first
 * (operators that pack before asking) is refused too: the loader compares those bytes when they come. */
static void* sizer_reserve_space(void* context, size_t n) {
  sizer* z = context;
  if (z->has_pending) z->report(z->context, &z->pending, n);
  z->has_pending = false;
  return NULL;
}

static size_t sizer_look_up_or_insert(void* context, const struct xnn_weights_cache_look_up_key* key, void* ptr,
                                      size_t size) {
  if (ptr == NULL) return sizer_look_up(context, key);
  return SIZE_MAX;
}

/* As the loader's provider answers, so that XNNPACK takes the same path. */
static bool sizer_is_finalized(void* context) { return true; }
static void* sizer_offset_to_addr(void* context, size_t offset) { return NULL; }
static enum xnn_status sizer_delete_cache(void* context) { return xnn_status_success; }

/* The serialized ids a weight node reads and writes, or 0 for a node that packs no static filter. */
static int weight_node_ids(const xpack_et_xnn_graph* g, const xpack_et_xnn_node* n, uint32_t ids[4]) {
  switch (n->type) {
    case XPACK_ET_XNN_FULLY_CONNECTED:
      ids[0] = n->u.fully_connected.input1_id;
      ids[1] = n->u.fully_connected.filter_id;
      ids[2] = n->u.fully_connected.bias_id;
      ids[3] = n->u.fully_connected.output_id;
      break;
    case XPACK_ET_XNN_CONV2D:
    case XPACK_ET_XNN_DEPTHWISE_CONV2D:
    case XPACK_ET_XNN_CONV_TRANSPOSE2D:
      ids[0] = n->u.conv.input1_id;
      ids[1] = n->u.conv.filter_id;
      ids[2] = n->u.conv.bias_id;
      ids[3] = n->u.conv.output_id;
      break;
    default: return 0;
  }
  const xpack_et_xnn_value* filter = xpack_et_xnn_graph_find_value(g, ids[1]);
  return filter != NULL && filter->constant_buffer_idx != 0;
}

/* The Convert node that writes `serialized` (a dynamically quantized input), or NULL. */
static const xpack_et_xnn_node* convert_into(const xpack_et_xnn_graph* g, uint32_t serialized) {
  for (size_t i = 0; i < g->node_count; i++) {
    const xpack_et_xnn_node* n = &g->nodes[i];
    if (n->type == XPACK_ET_XNN_CONVERT && n->u.unary.output_id == serialized) return n;
  }
  return NULL;
}

static void reset_definitions(xp_replay_state* s) {
  s->id_count = 0;
  s->ids_sorted = 0;
  free(s->externals);
  s->externals = NULL;
  s->num_externals = 0;
  s->family_count = 0;
  if (s->value_info != NULL) memset(s->value_info, 0, s->value_info_capacity * sizeof *s->value_info);
}

/* Defines a value the node uses, once. The node's output is made an external output of its own (the
 * subgraph's external id num_externs) if it is not one: XNNPACK drops a node whose output nothing reads. */
static xpack_status define_serialized(xp_replay_state* s, uint32_t serialized, bool output, xpack_error* err) {
  uint32_t defined;
  if (serialized == XNN_INVALID_VALUE_ID || xp_replay_lookup_id(s, serialized, &defined) == 0) return XPACK_OK;
  xpack_et_xnn_value v = *xpack_et_xnn_graph_find_value(s->graph, serialized);
  if (output && !(v.flags & XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_OUTPUT)) {
    v.flags = XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
    v.external_id = s->graph->num_externs;
  }
  return xp_replay_define_value(s, &v, err);
}

/* Defines node n alone and has XNNPACK size its weight. A node XNNPACK will not define or create alone is
 * left unsized (its weight then misses at the loader): only running out of memory is an error. */
static xpack_status size_node(xp_replay_state* s, const xpack_et_xnn_node* n, const uint32_t ids[4], sizer* z,
                              xpack_error* err) {
  reset_definitions(s);
  if (xnn_create_subgraph(s->graph->num_externs + 1, 0, &s->subgraph) != xnn_status_success) {
    return xp_fail(err, XPACK_ERR_XNNPACK, "%s: node %u (%s): xnn_create_subgraph failed", s->graph->name, n->index,
                   n->type_name);
  }
  xpack_error ignored;
  xpack_status st = XPACK_OK;
  const xpack_et_xnn_node* convert = convert_into(s->graph, ids[0]);
  if (convert != NULL) st = define_serialized(s, convert->u.unary.input_id, false, &ignored);
  for (int k = 0; st == XPACK_OK && k < 4; k++) st = define_serialized(s, ids[k], k == 3, &ignored);
  if (st == XPACK_OK && convert != NULL) st = xp_replay_define_node(s, convert, &ignored);
  if (st == XPACK_OK) st = xp_replay_define_node(s, n, &ignored);
  if (st == XPACK_OK) {
    xnn_runtime_t runtime = NULL;
    z->has_pending = false;
    if (xnn_create_runtime_v4(s->subgraph, &z->provider, NULL, NULL, 0, &runtime) == xnn_status_success) {
      xnn_delete_runtime(runtime);
    }
  }
  xnn_delete_subgraph(s->subgraph);
  s->subgraph = NULL;
  xp_replay_free_scratch(s->scratch);
  s->scratch = NULL;
  if (st == XPACK_ERR_NOMEM) return xp_fail(err, st, "%s", ignored.message);
  return XPACK_OK;
}

xpack_status xpack_replay_size_weights(const xpack_et_xnn_graph* graph, const xpack_et_named_sources* sources,
                                       xpack_size_fn report, void* context, xpack_error* err) {
  if (graph == NULL || report == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_replay_size_weights: %s is NULL", graph == NULL ? "the graph" : "report");
  }
  xp_replay_state s = {.graph = graph, .sources = sources};
  sizer z = {
      .provider =
          {
              .context = &z,
              .look_up = sizer_look_up,
              .reserve_space = sizer_reserve_space,
              .look_up_or_insert = sizer_look_up_or_insert,
              .is_finalized = sizer_is_finalized,
              .offset_to_addr = sizer_offset_to_addr,
              .delete_cache = sizer_delete_cache,
          },
      .report = report,
      .context = context,
  };
  /* The checks the replay makes before XNNPACK sees anything: a graph that fails them is not sized. */
  xpack_status st = xp_replay_check_graph_values(&s, err);
  for (size_t i = 0; st == XPACK_OK && i < graph->node_count; i++) st = xp_replay_check_node(&s, &graph->nodes[i], err);
  for (size_t i = 0; st == XPACK_OK && i < graph->node_count; i++) {
    uint32_t ids[4];
    if (weight_node_ids(graph, &graph->nodes[i], ids)) st = size_node(&s, &graph->nodes[i], ids, &z, err);
  }
  free(s.ids);
  free(s.value_info);
  free(s.value_use);
  free(s.converted_from);
  free(s.externals);
  free(s.families);
  return st;
}
