/* Inspection: what a program holds, what each XNNPACK delegate computes and where its weights live. */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "et/et_internal.h"

static xpack_status add_constant(xpack_et_delegate_summary* d, const xpack_et_xnn_graph* g, uint32_t idx,
                                 const xpack_et_xnn_value* v, bool is_scale, const xpack_et_named_sources* src,
                                 xpack_error* err) {
  xpack_et_constant c;
  xpack_status st = xpack_et_xnn_resolve_constant(g, idx, src, &c, err);
  if (st != XPACK_OK || c.source == XPACK_ET_CONSTANT_NONE) return st;
  bool ambiguous = false;
  size_t cap = (c.named_key ? c.named_key_len : 0) + XPACK_ET_IDENTITY_MAX + XPACK_ET_PACKING_SUFFIX_SIZE;
  char* id = malloc(cap);
  if (!id) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", g->name);
  st = xpack_et_weight_identity_of(g, src, idx, &c, is_scale, id, cap, NULL, &ambiguous, err);
  if (st != XPACK_OK) {
    free(id);
    return st;
  }
  xpack_et_constant_summary* s = &d->constants[d->constant_count++];
  s->identity = id;
  s->source = c.source;
  s->size = c.size;
  s->value_index = v->index;
  s->is_scale = is_scale;
  s->datatype = v->datatype;
  s->data = c.data;
  s->ptd_index = c.ptd_index;
  s->ambiguous = ambiguous;
  d->constant_bytes += c.size;
  return XPACK_OK;
}

xpack_status xpack_et_summarize_graph(const xpack_et_xnn_graph* g, const xpack_et_named_sources* src,
                                      xpack_et_delegate_summary* d, xpack_error* err) {
  if (!g || !d) return xp_fail(err, XPACK_ERR_ARG, "xpack_et_summarize_graph: %s is NULL", !g ? "the graph" : "d");
  d->has_header = g->has_header;
  memcpy(d->identifier, g->identifier, sizeof d->identifier);
  d->value_count = g->value_count;
  d->node_count = g->node_count;
  for (size_t k = 0; k < g->node_count; k++) {
    if (g->nodes[k].type <= XPACK_ET_XNN_NODE_TYPE_MAX) d->node_type_counts[g->nodes[k].type]++;
  }
  for (size_t k = 0; k < g->value_count; k++) {
    const int16_t dt = g->values[k].datatype;
    if (dt >= 0 && dt < XPACK_ET_XNN_DT_COUNT) d->datatype_counts[dt]++;
    else d->unknown_datatypes++;
  }
  /* Each constant index is listed once, even when several values share it. */
  size_t slots = g->has_header ? g->constant_entry_count : g->legacy_constant_buffer_count;
  bool* seen = calloc(slots ? slots : 1, sizeof *seen);
  d->constants = calloc(g->value_count * 2 + 1, sizeof *d->constants);
  if (!seen || !d->constants) {
    free(seen);
    return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", g->name);
  }
  xpack_status st = XPACK_OK;
  for (size_t k = 0; k < g->value_count && st == XPACK_OK; k++) {
    const xpack_et_xnn_value* v = &g->values[k];
    uint32_t idx[2] = {v->constant_buffer_idx, v->quant.scale_buffer_idx};
    for (int s = 0; s < 2 && st == XPACK_OK; s++) {
      if (idx[s] == 0 || (idx[s] < slots && seen[idx[s]])) continue;
      st = add_constant(d, g, idx[s], v, s == 1, src, err);
      if (st == XPACK_OK && idx[s] < slots) seen[idx[s]] = true;
    }
  }
  free(seen);
  /* Room was made for two constants per value; a summary is kept as long as its program (inspect keeps every
   * delegate's), so give back what was not used. */
  xpack_et_constant_summary* fitted =
      realloc(d->constants, (d->constant_count ? d->constant_count : 1) * sizeof *d->constants);
  if (fitted != NULL) d->constants = fitted;
  return st;
}

void xpack_et_delegate_summary_clear(xpack_et_delegate_summary* d) {
  if (!d) return;
  for (size_t k = 0; k < d->constant_count; k++) free(d->constants[k].identity);
  free(d->constants);
  d->constants = NULL;
  d->constant_count = 0;
}

static xpack_status summarize_xnnpack(const xpack_et_program* program, size_t m, size_t i,
                                      const xpack_et_named_sources* src, xpack_et_delegate_summary* d,
                                      xpack_error* err) {
  xpack_et_xnn_graph* g = NULL;
  xpack_status st = xpack_et_xnn_graph_open(program, m, i, &g, err);
  if (st != XPACK_OK) return st;
  st = xpack_et_summarize_graph(g, src, d, err);
  xpack_et_xnn_graph_free(g);
  return st;
}

xpack_status xpack_et_summarize(const xpack_et_program* program, const xpack_et_named_sources* sources,
                                xpack_et_summary** out, xpack_error* err) {
  if (out != NULL) *out = NULL; /* on every failure, a caller error included */
  if (!program || !out) return xp_fail(err, XPACK_ERR_ARG, "xpack_et_summarize: NULL program or out");
  const xpack_et_program_info* info = xpack_et_program_get_info(program);
  xpack_et_named_sources src = {program, NULL, 0};
  if (sources) {
    src = *sources;
    if (!src.program) src.program = program;
  }
  size_t total = 0;
  for (size_t m = 0; m < info->method_count; m++) total += info->methods[m].delegate_count;
  xpack_et_summary* s = calloc(1, sizeof *s);
  if (!s || (total && !(s->delegates = calloc(total, sizeof *s->delegates)))) {
    free(s);
    return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", info->name);
  }
  s->method_count = info->method_count;
  s->named_data_count = info->named_data_count;
  s->segment_count = info->segment_count;
  xpack_status st = XPACK_OK;
  for (size_t m = 0; m < info->method_count && st == XPACK_OK; m++) {
    const xpack_et_method* method = &info->methods[m];
    for (size_t i = 0; i < method->delegate_count && st == XPACK_OK; i++) {
      const xpack_et_delegate* del = &method->delegates[i];
      xpack_et_delegate_summary* d = &s->delegates[s->delegate_count++];
      d->method_index = m;
      d->delegate_index = i;
      d->method_name = method->name;
      d->backend_id = del->backend_id;
      d->is_xnnpack = del->is_xnnpack;
      d->location = del->location;
      d->location_index = del->index;
      d->size = del->size;
      if (del->is_xnnpack) {
        s->xnnpack_delegate_count++;
        st = summarize_xnnpack(program, m, i, &src, d, err);
      }
    }
  }
  if (st != XPACK_OK) {
    xpack_et_summary_free(s);
    return st;
  }
  *out = s;
  return XPACK_OK;
}

void xpack_et_summary_free(xpack_et_summary* s) {
  if (!s) return;
  for (size_t i = 0; i < s->delegate_count; i++) xpack_et_delegate_summary_clear(&s->delegates[i]);
  free(s->delegates);
  free(s);
}

xpack_status xpack_et_summary_print(const xpack_et_summary* s, const xpack_et_program* program, bool verbose,
                                    FILE* out, xpack_error* err) {
  if (!s || !out) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_et_summary_print: %s is NULL", !s ? "the summary" : "out");
  }
  const xpack_et_program_info* info = program ? xpack_et_program_get_info(program) : NULL;
  if (info) {
    fprintf(out, "%s: %zu bytes, program version %u, ", info->name, info->file_size, (unsigned)info->version);
    if (info->extended_header_size) {
      fprintf(out, "eh00 header %u bytes, %zu segment(s)\n", (unsigned)info->extended_header_size, s->segment_count);
    } else {
      fprintf(out, "no extended header\n");
    }
    fprintf(out, "methods: %zu;", s->method_count);
    for (size_t m = 0; m < info->method_count; m++) {
      fprintf(out, " %s", info->methods[m].name ? info->methods[m].name : "(unnamed)");
    }
    fprintf(out, "\nnamed_data: %zu; legacy constant_buffer: %zu\n", s->named_data_count,
            info->legacy_constant_buffer_count);
  }
  fprintf(out, "delegates: %zu (%zu XNNPACK)\n", s->delegate_count, s->xnnpack_delegate_count);
  if (s->xnnpack_delegate_count == 0) fprintf(out, "no XNNPACK delegate: nothing to pack\n");
  for (size_t i = 0; i < s->delegate_count; i++) {
    const xpack_et_delegate_summary* d = &s->delegates[i];
    fprintf(out, "  [%s] delegate %zu: %s, %s[%u], %zu bytes", d->method_name ? d->method_name : "?", d->delegate_index,
            d->backend_id, d->location == XPACK_ET_LOCATION_SEGMENT ? "segment" : "inline", (unsigned)d->location_index,
            d->size);
    if (!d->is_xnnpack) {
      fprintf(out, " (not XNNPACK: skipped)\n");
      continue;
    }
    fprintf(out, ", %s%s, %zu values, %zu nodes\n", d->identifier, d->has_header ? "+XH00" : " (legacy, no XH00)",
            d->value_count, d->node_count);
    fprintf(out, "    nodes:");
    for (int t = 1; t <= XPACK_ET_XNN_NODE_TYPE_MAX; t++) {
      if (d->node_type_counts[t]) fprintf(out, " %s x%u", xpack_et_xnn_node_type_name(t), (unsigned)d->node_type_counts[t]);
    }
    fprintf(out, "\n    datatypes:");
    for (int t = 0; t < XPACK_ET_XNN_DT_COUNT; t++) {
      if (d->datatype_counts[t]) fprintf(out, " %s x%u", xpack_et_xnn_datatype_name(t), (unsigned)d->datatype_counts[t]);
    }
    unsigned per_source[5] = {0};
    for (size_t k = 0; k < d->constant_count; k++) per_source[d->constants[k].source]++;
    fprintf(out, "\n    constants: %zu, %llu bytes", d->constant_count, (unsigned long long)d->constant_bytes);
    for (int src = 1; src < 5; src++) {
      if (per_source[src]) fprintf(out, "; %u in %s", per_source[src], xpack_et_constant_source_name(src));
    }
    fprintf(out, "\n");
    if (!verbose) continue;
    for (size_t k = 0; k < d->constant_count; k++) {
      const xpack_et_constant_summary* c = &d->constants[k];
      fprintf(out, "      %s %zu bytes %s%s (xvalues[%u], %s)\n", c->identity, c->size,
              xpack_et_constant_source_name(c->source), c->is_scale ? " scale" : "", (unsigned)c->value_index,
              xpack_et_xnn_datatype_name(c->datatype));
    }
  }
  /* What stdio still holds is written now: a full disk under a buffered stream shows only at the flush. */
  if (fflush(out) != 0 || ferror(out)) {
    return xp_fail(err, XPACK_ERR_IO, "writing the summary of %s failed", info ? info->name : "a program");
  }
  return XPACK_OK;
}
