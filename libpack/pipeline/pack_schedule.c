/* Which delegate a packing worker takes next: see pack_schedule.h. */
#include "pipeline/pack_schedule.h"

#include <stdlib.h>


static int by_address(const void* a, const void* b) {
  const uintptr_t x = *(const uintptr_t*)a, y = *(const uintptr_t*)b;
  return x < y ? -1 : x > y;
}

static void add_constant(const xpack_et_xnn_graph* graph, uint32_t idx, const xpack_et_named_sources* sources,
                         uintptr_t* list, size_t* n) {
  if (idx == 0) return;
  xpack_et_constant c;
  xpack_error err;
  if (xpack_et_xnn_resolve_constant(graph, idx, sources, &c, &err) == XPACK_OK && c.data != NULL) {
    list[(*n)++] = (uintptr_t)c.data;
  }
}

int xp_pack_schedule_list(xp_pack_schedule* s, size_t index, const xpack_model_set* set, const xpack_delegate_ref* ref) {
  if (!ref->info->is_xnnpack) return 0;
  xpack_et_xnn_graph* graph = NULL;
  xpack_error err;
  if (xpack_et_xnn_graph_open(set->programs[ref->program], ref->method, ref->delegate, &graph, &err) != XPACK_OK) {
    return 0;
  }
  uintptr_t* list = malloc((2 * graph->value_count + 1) * sizeof *list);
  if (list == NULL) {
    xpack_et_xnn_graph_free(graph);
    return -1;
  }
  const xpack_et_named_sources sources = xpack_model_set_sources(set, ref->program);
  size_t n = 0;
  for (size_t i = 0; i < graph->value_count; i++) {
    add_constant(graph, graph->values[i].constant_buffer_idx, &sources, list, &n);
    add_constant(graph, graph->values[i].quant.scale_buffer_idx, &sources, list, &n);
  }
  xpack_et_xnn_graph_free(graph);
  qsort(list, n, sizeof *list, by_address);
  s->weights[index] = list;
  s->weight_count[index] = n;
  return 0;
}

int xp_pack_schedule_init(xp_pack_schedule* s, size_t count, int reverse) {
  *s = (xp_pack_schedule){.count = count, .reverse = reverse};
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->changed, NULL);
  s->weights = calloc(count + 1, sizeof *s->weights);
  s->weight_count = calloc(count + 1, sizeof *s->weight_count);
  s->state = calloc(count + 1, 1);
  return s->weights == NULL || s->weight_count == NULL || s->state == NULL ? -1 : 0;
}

void xp_pack_schedule_destroy(xp_pack_schedule* s) {
  for (size_t i = 0; s->weights != NULL && i < s->count; i++) free(s->weights[i]);
  free(s->weights);
  free(s->weight_count);
  free(s->state);
  pthread_cond_destroy(&s->changed);
  pthread_mutex_destroy(&s->lock);
}

static int share_a_weight(const xp_pack_schedule* s, size_t a, size_t b) {
  const uintptr_t *x = s->weights[a], *y = s->weights[b];
  for (size_t i = 0, j = 0; i < s->weight_count[a] && j < s->weight_count[b];) {
    if (x[i] == y[j]) return 1;
    if (x[i] < y[j]) i++; else j++;
  }
  return 0;
}

/* A waiting delegate that shares no weight with any delegate in flight, or SIZE_MAX. Lock held. */
static size_t first_free(const xp_pack_schedule* s, int* any_waiting) {
  *any_waiting = 0;
  for (size_t k = 0; k < s->count; k++) {
    const size_t i = s->reverse ? s->count - 1 - k : k;
    if (s->state[i] != 0) continue;
    *any_waiting = 1;
    int clash = 0;
    for (size_t j = 0; j < s->count && !clash; j++) clash = s->state[j] == 1 && share_a_weight(s, i, j);
    if (!clash) return i;
  }
  return SIZE_MAX;
}

size_t xp_pack_schedule_take(xp_pack_schedule* s) {
  pthread_mutex_lock(&s->lock);
  size_t i = SIZE_MAX;
  for (;;) {
    int any_waiting;
    if (s->stop) break;
    i = first_free(s, &any_waiting);
    if (i != SIZE_MAX || !any_waiting) break;
    /* Every waiting delegate shares a weight with one in flight, which will finish and signal. */
    pthread_cond_wait(&s->changed, &s->lock);
  }
  if (i != SIZE_MAX) s->state[i] = 1;
  pthread_mutex_unlock(&s->lock);
  return i;
}

void xp_pack_schedule_done(xp_pack_schedule* s, size_t index, int stop) {
  pthread_mutex_lock(&s->lock);
  s->state[index] = 2;
  if (stop) s->stop = 1;
  pthread_cond_broadcast(&s->changed);
  pthread_mutex_unlock(&s->lock);
}
