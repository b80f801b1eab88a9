/* Replaying an XNNPACK delegate: values in order, then nodes in order, as ExecuTorch's backend does. */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "loader/own_runtime.h"
#include "loader/xnn_compat.h"
#include "replay/replay_internal.h"

xpack_status xp_replay_map_id(xp_replay_state* s, uint32_t serialized, uint32_t defined, xpack_error* err) {
  if (s->id_count == s->id_capacity) {
    size_t cap = s->id_capacity ? s->id_capacity * 2 : 64;
    xp_replay_id_pair* grown = realloc(s->ids, cap * sizeof *grown);
    if (grown == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
    s->ids = grown;
    s->id_capacity = cap;
  }
  s->ids[s->id_count++] = (xp_replay_id_pair){serialized, defined};
  s->ids_sorted = 0;
  return XPACK_OK;
}

static int by_serialized(const void* a, const void* b) {
  uint32_t x = ((const xp_replay_id_pair*)a)->serialized, y = ((const xp_replay_id_pair*)b)->serialized;
  return x < y ? -1 : x > y;
}

int xp_replay_lookup_id(xp_replay_state* s, uint32_t serialized, uint32_t* defined) {
  if (serialized == XNN_INVALID_VALUE_ID) {
    *defined = XNN_INVALID_VALUE_ID;
    return 0;
  }
  if (s->id_count == 0) return -1; /* nothing defined yet (and no array to sort: qsort takes no NULL) */
  if (!s->ids_sorted) {
    qsort(s->ids, s->id_count, sizeof *s->ids, by_serialized);
    s->ids_sorted = 1;
  }
  xp_replay_id_pair key = {serialized, 0};
  const xp_replay_id_pair* hit = bsearch(&key, s->ids, s->id_count, sizeof *s->ids, by_serialized);
  if (hit == NULL) return -1;
  *defined = hit->defined;
  return 0;
}

xpack_status xp_replay_check_graph_values(xp_replay_state* s, xpack_error* err) {
  xpack_status st = xp_replay_find_value_uses(s, err);
  if (st == XPACK_OK) st = xp_replay_check_external_ids(s, err);
  for (size_t i = 0; st == XPACK_OK && i < s->graph->value_count; i++) {
    st = xp_replay_check_value(s, &s->graph->values[i], err);
  }
  if (st == XPACK_OK) st = xp_replay_shapes_init(s, err);
  return st;
}

xpack_status xp_replay_check_node(xp_replay_state* s, const xpack_et_xnn_node* node, xpack_error* err) {
  xpack_status st = xp_replay_check_node_ids(s, node, err);
  if (st == XPACK_OK) st = xp_replay_check_elementwise(s, node, err);
  if (st == XPACK_OK) st = xp_replay_check_dynamic_quant(s, node, err);
  if (st == XPACK_OK) st = xp_replay_check_flags(s, node, err);
  if (st == XPACK_OK) st = xp_replay_check_window(s, node, err);
  if (st == XPACK_OK) xp_replay_shapes_note_node(s, node); /* for the checks of the nodes after it */
  return st;
}

void xp_replay_free_scratch(xp_replay_scratch* block) {
  while (block != NULL) {
    xp_replay_scratch* next = block->next;
    free(block);
    block = next;
  }
}

void xp_replay_free_tables(xp_replay_state* s) {
  free(s->ids);
  free(s->value_info);
  free(s->value_use);
  free(s->converted_from);
  free(s->shapes);
  xp_replay_bindings_free(&s->bound);
  s->shapes = NULL;
  s->ids = NULL;
  s->value_info = NULL;
  s->value_use = NULL;
  s->converted_from = NULL;
}

xpack_status xpack_replay_define(const xpack_et_xnn_graph* graph, const xpack_et_named_sources* sources,
                                 xpack_bind_fn bind, void* bind_context, xpack_replay_subgraph* out, xpack_error* err) {
  if (graph == NULL || out == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_replay_define: %s is NULL", graph == NULL ? "the graph" : "out");
  }
  memset(out, 0, sizeof *out);
  xp_replay_state s = {.graph = graph, .sources = sources, .bind = bind, .bind_context = bind_context};
  enum xnn_status xs = xnn_create_subgraph(graph->num_externs, 0, &s.subgraph);
  if (xs != xnn_status_success) {
    return xp_fail(err, xp_xnn_failure(xs), "%s: xnn_create_subgraph(%u externals) failed (status %d: %s)", graph->name,
                   graph->num_externs, (int)xs, xp_xnn_status_text(xs));
  }
  xpack_status st = xp_replay_check_graph_values(&s, err);
  if (st == XPACK_OK) xp_replay_read_ahead(&s);
  for (size_t i = 0; st == XPACK_OK && i < graph->value_count; i++) st = xp_replay_define_value(&s, &graph->values[i], err);
  for (size_t i = 0; st == XPACK_OK && i < graph->node_count; i++) {
    st = xp_replay_check_node(&s, &graph->nodes[i], err);
    if (st == XPACK_OK) st = xp_replay_define_node(&s, &graph->nodes[i], err);
  }
  xp_replay_free_tables(&s);
  if (st != XPACK_OK) {
    xnn_delete_subgraph(s.subgraph);
    free(s.externals);
    free(s.families);
    xp_replay_free_scratch(s.scratch);
    return st;
  }
  out->subgraph = s.subgraph;
  out->externals = s.externals;
  out->num_externals = s.num_externals;
  out->weight_families = s.families;
  out->num_weight_families = s.family_count;
  out->unnamed_long = s.unnamed_long;
  out->scratch = s.scratch;
  out->growth_bytes = s.growth;
  out->grows = s.growth > XPACK_REPLAY_GROWTH_BUDGET;
  out->grown_value = s.grown_value;
  out->grown_bytes = s.grown_bytes;
  out->grown_declared_bytes = s.grown_declared_bytes;
  return XPACK_OK;
}

enum xnn_status xpack_replay_create_runtime(const xpack_replay_subgraph* replay,
                                            struct xnn_weights_cache_provider* provider, xnn_runtime_t* runtime) {
  if (replay == NULL || replay->subgraph == NULL || runtime == NULL) return xnn_status_invalid_parameter;
  /* xpack's own: an app's wrapper of xnn_create_runtime_v4 (the ExecuTorch adapter) must pass `provider` through.
   * Given the attached cache instead, `xpack pack` in such a process recorded nothing (found by a review). */
  return xp_create_own_runtime(replay->subgraph, provider, NULL, runtime);
}

void xpack_replay_drop_definition(xpack_replay_subgraph* r) {
  if (r == NULL) return;
  if (r->subgraph) xnn_delete_subgraph(r->subgraph);
  r->subgraph = NULL;
  xp_replay_free_scratch(r->scratch);
  r->scratch = NULL;
}

void xpack_replay_release(xpack_replay_subgraph* r) {
  if (r == NULL) return;
  xpack_replay_drop_definition(r);
  free(r->externals);
  free(r->weight_families);
  memset(r, 0, sizeof *r);
}
