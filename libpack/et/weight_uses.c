/* Who uses a constant's bytes, and which nodes pack each value as their filter: indexed once per parsed graph
 * (xp_xnn_graph_index_uses), so that a weight's packing suffix costs O(its uses) rather than a scan of every value
 * and node per constant. Scanning made the identities of a delegate of 1,000 convolutions cost 18 ms at start-up,
 * and 2.2 s for 10,000 (a review on 2026-11-28). */
#include <stdlib.h>
#include <string.h>

#include "et/xnn_graph_internal.h"

/* A constant index's bytes, as packing_suffix.c's rules tell them apart (one pointer for all indexes alike): an
 * index alone, the named key of a blob's entry, or its place in the blob's constant region. */
typedef struct bytes_class {
  uint32_t kind; /* BY_INDEX, BY_KEY, BY_OFFSET */
  uint64_t number; /* the index, the offset, or the key's length */
  const char* key;
  uint32_t value_index; /* the value having it (a tie-break: equal classes keep value order) */
} bytes_class;

enum { BY_INDEX = 0, BY_KEY = 1, BY_OFFSET = 2 };

static bytes_class class_of(const xpack_et_xnn_graph* g, uint32_t constant_idx) {
  bytes_class c = {BY_INDEX, constant_idx, NULL, 0};
  if (!g->has_header || constant_idx >= g->constant_entry_count) return c;
  const xpack_et_xnn_constant_entry* e = &g->constant_entries[constant_idx];
  if (e->named_key != NULL) return (bytes_class){BY_KEY, e->named_key_len, e->named_key, 0};
  if (e->size != 0) return (bytes_class){BY_OFFSET, e->offset, NULL, 0};
  return c; /* an empty entry at no place: only its own index shares its bytes */
}

static int compare_bytes(const bytes_class* a, const bytes_class* b) {
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  if (a->number != b->number) return a->number < b->number ? -1 : 1;
  return a->kind == BY_KEY ? memcmp(a->key, b->key, (size_t)a->number) : 0;
}

static int compare_classes(const void* x, const void* y) {
  const bytes_class *a = x, *b = y;
  const int c = compare_bytes(a, b);
  if (c != 0) return c;
  return a->value_index < b->value_index ? -1 : a->value_index > b->value_index;
}

/* The value a node packs as its filter; NULL for a node packing none. */
static const xpack_et_xnn_value* filter_of(const xpack_et_xnn_graph* g, const xpack_et_xnn_node* n) {
  xpack_et_xnn_weight_ids ids;
  return xpack_et_xnn_node_weight_ids(n, &ids) ? xpack_et_xnn_graph_find_value(g, ids.filter) : NULL;
}

void xp_xnn_graph_forget_suffixes(xp_xnn_graph* g) {
  pthread_mutex_lock(&g->suffix_lock);
  if (g->suffixes != NULL) memset(g->suffixes, 0, g->by_bytes_count * sizeof *g->suffixes);
  pthread_mutex_unlock(&g->suffix_lock);
}

bool xp_xnn_graph_index_uses(xp_xnn_graph* g) {
  const xpack_et_xnn_graph* pub = &g->pub;
  pthread_mutex_lock(&g->suffix_lock);
  g->suffixes = NULL; /* those of the uses indexed before, if any (left in the arena) */
  g->by_bytes_count = 0;
  pthread_mutex_unlock(&g->suffix_lock);
  size_t with_bytes = 0;
  for (size_t i = 0; i < pub->value_count; i++) with_bytes += pub->values[i].constant_buffer_idx != 0;
  bytes_class* classes = with_bytes ? malloc(with_bytes * sizeof *classes) : NULL;
  if (with_bytes && classes == NULL) return false;
  size_t k = 0;
  for (size_t i = 0; i < pub->value_count; i++) {
    if (pub->values[i].constant_buffer_idx == 0) continue;
    classes[k] = class_of(pub, pub->values[i].constant_buffer_idx);
    classes[k++].value_index = (uint32_t)i;
  }
  if (with_bytes) qsort(classes, with_bytes, sizeof *classes, compare_classes);
  g->by_bytes = xp_arena_array(&g->arena, with_bytes ? with_bytes : 1, sizeof *g->by_bytes);
  g->users_start = xp_arena_array(&g->arena, pub->value_count + 1, sizeof *g->users_start);
  /* With the graph's own memory, not at the first suffix: allocated then, in the middle of a replay, the memo sat
   * right after the arrays XNNPACK's subgraph grows by realloc, which then moved them to new pages at every value
   * (12 to 14 more page faults in a fresh process's load of person_detect_fp32, 0.04 ms on a 0.5 ms start). */
  pthread_mutex_lock(&g->suffix_lock);
  g->suffixes = xp_arena_array(&g->arena, with_bytes ? with_bytes : 1, sizeof *g->suffixes);
  pthread_mutex_unlock(&g->suffix_lock);
  if (g->by_bytes == NULL || g->users_start == NULL || g->suffixes == NULL) {
    free(classes);
    return false;
  }
  for (size_t i = 0; i < with_bytes; i++) g->by_bytes[i] = classes[i].value_index;
  g->by_bytes_count = with_bytes;
  free(classes);

  /* Filter users by value, in node order: counted, then placed (compressed rows). */
  size_t users = 0;
  for (size_t n = 0; n < pub->node_count; n++) {
    const xpack_et_xnn_value* v = filter_of(pub, &pub->nodes[n]);
    if (v == NULL) continue;
    g->users_start[v - pub->values + 1]++;
    users++;
  }
  for (size_t i = 0; i < pub->value_count; i++) g->users_start[i + 1] += g->users_start[i];
  g->users = xp_arena_array(&g->arena, users ? users : 1, sizeof *g->users);
  uint32_t* next = malloc((pub->value_count ? pub->value_count : 1) * sizeof *next);
  if (g->users == NULL || next == NULL) {
    free(next);
    return false;
  }
  memcpy(next, g->users_start, pub->value_count * sizeof *next);
  for (size_t n = 0; n < pub->node_count; n++) {
    const xpack_et_xnn_value* v = filter_of(pub, &pub->nodes[n]);
    if (v != NULL) g->users[next[v - pub->values]++] = (uint32_t)n;
  }
  free(next);
  return true;
}

void xp_xnn_graph_values_with_bytes(const xpack_et_xnn_graph* graph, uint32_t constant_idx, const uint32_t** first,
                                    size_t* count) {
  const xp_xnn_graph* g = xp_xnn_graph_impl(graph);
  *first = NULL;
  *count = 0;
  if (constant_idx == 0 || g->by_bytes == NULL) return;
  const bytes_class want = class_of(graph, constant_idx);
  size_t lo = 0, hi = g->by_bytes_count;
  while (lo < hi) { /* the first value not before the class */
    const size_t mid = lo + (hi - lo) / 2;
    const bytes_class at = class_of(graph, graph->values[g->by_bytes[mid]].constant_buffer_idx);
    if (compare_bytes(&at, &want) < 0) lo = mid + 1; else hi = mid;
  }
  size_t end = lo;
  while (end < g->by_bytes_count) {
    const bytes_class at = class_of(graph, graph->values[g->by_bytes[end]].constant_buffer_idx);
    if (compare_bytes(&at, &want) != 0) break;
    end++;
  }
  *first = g->by_bytes + lo;
  *count = end - lo;
}

void xp_xnn_graph_filter_users(const xpack_et_xnn_graph* graph, const xpack_et_xnn_value* value,
                               const uint32_t** first, size_t* count) {
  const xp_xnn_graph* g = xp_xnn_graph_impl(graph);
  const size_t i = (size_t)(value - graph->values);
  *first = g->users + g->users_start[i];
  *count = g->users_start[i + 1] - g->users_start[i];
}
