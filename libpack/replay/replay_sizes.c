/* Asking XNNPACK how many bytes it reads for each packed weight (xpack_replay_size_weights).
 *
 * XNNPACK's weights-cache key names a weight (a seed and two pointers) but not its size, and on a hit
 * XNNPACK reads as many bytes as it computes from the operator, whatever the cache claims. A loader that
 * serves a region shorter than that lets XNNPACK read past it. So each node that packs a static filter is
 * defined alone (its own values, and the Convert that quantizes its input at run time) in a subgraph of its
 * own, and a runtime is created over a provider that misses every look-up and refuses the space XNNPACK
 * then reserves: XNNPACK has computed the key and the packed size by then, reports both, and gives up
 * before it packs or reads a weight byte. Nodes alike in everything XNNPACK sizes from (the node's
 * parameters, its values' datatypes, dims and quantization layout) share one answer: the seed and the size,
 * with each node's own filter and bias pointers as the key (when the first node's key holds exactly its own
 * pointers). An LLM's layers then cost a few runtimes, not one per weight; XNNPACK validates every
 * quantization scale while it creates, so each runtime reads the scales. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/error.h"
#include "loader/own_runtime.h"
#include "loader/xnn_compat.h"
#include "replay/replay_internal.h"

typedef struct sizer {
  struct xnn_weights_cache_provider provider;
  struct xnn_weights_cache_look_up_key pending;
  bool has_pending;
  xpack_size_fn report;
  void* context;
  struct xnn_weights_cache_look_up_key last; /* the last key reported, and its size */
  size_t last_size;
  bool reported;
  bool (*wanted)(void* context, const xpack_family* family); /* NULL: every node is sized */
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
  if (z->has_pending) {
    z->report(z->context, &z->pending, n);
    z->last = z->pending;
    z->last_size = n;
    z->reported = true;
  }
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

/* The serialized ids a weight node reads and writes (input, filter, bias, output), or 0 for a node that packs
 * no static filter. */
static int weight_node_ids(const xpack_et_xnn_graph* g, const xpack_et_xnn_node* n, uint32_t ids[4]) {
  xpack_et_xnn_weight_ids w;
  if (!xpack_et_xnn_node_weight_ids(n, &w)) return 0;
  const uint32_t used[4] = {w.input, w.filter, w.bias, w.output};
  memcpy(ids, used, sizeof used);
  const xpack_et_xnn_value* filter = xpack_et_xnn_graph_find_value(g, ids[1]);
  return filter != NULL && filter->constant_buffer_idx != 0;
}

/* The graph's Convert nodes by the value they write, then by node order: looked up once per weight node (a scan
 * of every node per weight node cost 120 ms for 11,000 nodes). */
typedef struct convert_slot {
  uint32_t output_id, node;
} convert_slot;

typedef struct converts {
  convert_slot* slots;
  size_t count;
} converts;

static int compare_converts(const void* x, const void* y) {
  const convert_slot *a = x, *b = y;
  if (a->output_id != b->output_id) return a->output_id < b->output_id ? -1 : 1;
  return a->node < b->node ? -1 : a->node > b->node;
}

static bool index_converts(const xpack_et_xnn_graph* g, converts* out) {
  out->count = 0;
  out->slots = malloc((g->node_count ? g->node_count : 1) * sizeof *out->slots);
  if (out->slots == NULL) return false;
  for (size_t i = 0; i < g->node_count; i++) {
    if (g->nodes[i].type == XPACK_ET_XNN_CONVERT) {
      out->slots[out->count++] = (convert_slot){g->nodes[i].u.unary.output_id, (uint32_t)i};
    }
  }
  qsort(out->slots, out->count, sizeof *out->slots, compare_converts);
  return true;
}

/* The first Convert node that writes `serialized` (a dynamically quantized input), or NULL. */
static const xpack_et_xnn_node* convert_into(const xpack_et_xnn_graph* g, const converts* c, uint32_t serialized) {
  size_t lo = 0, hi = c->count;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (c->slots[mid].output_id < serialized) lo = mid + 1; else hi = mid;
  }
  return lo < c->count && c->slots[lo].output_id == serialized ? &g->nodes[c->slots[lo].node] : NULL;
}

/* Everything of a weight node that XNNPACK's packed size and seed can depend on, pointers and ids left out. */
typedef struct signature {
  unsigned char bytes[512];
  size_t len;
  uint64_t hash;
} signature;

static void put(signature* g, const void* p, size_t n) {
  /* A signature that overflows is never shared (see signature_of); its length stops just past the buffer rather
   * than grow by n, which a crafted count of dims could wrap where size_t has 32 bits. */
  if (g->len <= sizeof g->bytes && n <= sizeof g->bytes - g->len) {
    memcpy(g->bytes + g->len, p, n);
    g->len += n;
  } else {
    g->len = sizeof g->bytes + 1;
  }
}

static void put_value(signature* g, const xpack_et_xnn_graph* graph, uint32_t serialized) {
  const xpack_et_xnn_value* v = serialized == XNN_INVALID_VALUE_ID ? NULL : xpack_et_xnn_graph_find_value(graph, serialized);
  const uint8_t present = v != NULL;
  put(g, &present, sizeof present);
  if (v == NULL) return;
  const uint8_t is_constant = v->constant_buffer_idx != 0;
  const int32_t quant[6] = {(int32_t)v->quant.kind, v->quant.channel_dim, v->quant.group_size,
                            v->quant.num_nonbatch_dims, v->dq_datatype, (int32_t)v->flags};
  put(g, &v->datatype, sizeof v->datatype);
  put(g, &is_constant, sizeof is_constant);
  put(g, quant, sizeof quant);
  put(g, &v->num_dims, sizeof v->num_dims);
  put(g, v->dims, v->num_dims * sizeof *v->dims);
}

/* Returns false when the node is too large to describe (it is then sized alone). */
static bool signature_of(const xpack_et_xnn_graph* graph, const xpack_et_xnn_node* n, const uint32_t ids[4],
                         const xpack_et_xnn_node* convert, signature* g) {
  g->len = 0;
  const uint8_t type = n->type, ranged = n->has_output_min_max;
  put(g, &type, sizeof type);
  put(g, &ranged, sizeof ranged);
  if (ranged) {
    put(g, &n->output_min, sizeof n->output_min);
    put(g, &n->output_max, sizeof n->output_max);
  }
  if (n->type == XPACK_ET_XNN_FULLY_CONNECTED) {
    put(g, &n->u.fully_connected.flags, sizeof n->u.fully_connected.flags);
  } else {
    const __typeof__(n->u.conv)* c = &n->u.conv;
    const uint32_t params[18] = {c->padding_top, c->padding_right, c->padding_bottom, c->padding_left,
                                 c->kernel_height, c->kernel_width, c->subsampling_height, c->subsampling_width,
                                 c->dilation_height, c->dilation_width, c->group_input_channels,
                                 c->group_output_channels, c->groups, c->adjustment_height, c->adjustment_width,
                                 c->flags, 0, 0};
    put(g, params, sizeof params);
  }
  for (int k = 0; k < 4; k++) put_value(g, graph, ids[k]);
  put_value(g, graph, convert != NULL ? convert->u.unary.input_id : XNN_INVALID_VALUE_ID);
  if (g->len > sizeof g->bytes) return false;
  g->hash = XXH3_64bits(g->bytes, g->len);
  return true;
}

/* A node sized already, by signature: its seed and size, or that XNNPACK gave none. */
typedef struct sized_node {
  signature signature;
  bool reported;
  bool shareable; /* XNNPACK's key held the node's own filter and bias pointers */
  uint32_t seed;
  size_t size;
} sized_node;

typedef struct sized_nodes {
  sized_node* items;
  size_t count, capacity;
} sized_nodes;

static const sized_node* find_sized(const sized_nodes* t, const signature* g) {
  for (size_t i = 0; i < t->count; i++) {
    const sized_node* s = &t->items[i];
    if (s->signature.hash == g->hash && s->signature.len == g->len && memcmp(s->signature.bytes, g->bytes, g->len) == 0) {
      return s;
    }
  }
  return NULL;
}

/* The raw bytes a constant value resolves to (NULL without one). */
static const void* constant_data(const xp_replay_state* s, uint32_t serialized) {
  const xpack_et_xnn_value* v = serialized == XNN_INVALID_VALUE_ID ? NULL : xpack_et_xnn_graph_find_value(s->graph, serialized);
  xpack_et_constant c;
  if (v == NULL || v->constant_buffer_idx == 0 ||
      xpack_et_xnn_resolve_constant(s->graph, v->constant_buffer_idx, s->sources, &c, NULL) != XPACK_OK) {
    return NULL;
  }
  return c.data;
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
static xpack_status size_node(xp_replay_state* s, const xpack_et_xnn_node* n, const uint32_t ids[4],
                              const xpack_et_xnn_node* convert, sizer* z, xpack_error* err) {
  reset_definitions(s);
  z->reported = false;
  const enum xnn_status created = xnn_create_subgraph(s->graph->num_externs + 1, 0, &s->subgraph);
  if (created != xnn_status_success) {
    return xp_fail(err, xp_xnn_failure(created), "%s: node %u (%s): xnn_create_subgraph failed (status %d: %s)",
                   s->graph->name, n->index, n->type_name, (int)created, xp_xnn_status_text(created));
  }
  xpack_error ignored;
  xpack_status st = XPACK_OK;
  if (convert != NULL) st = define_serialized(s, convert->u.unary.input_id, false, &ignored);
  for (int k = 0; st == XPACK_OK && k < 4; k++) st = define_serialized(s, ids[k], k == 3, &ignored);
  if (st == XPACK_OK && convert != NULL) st = xp_replay_define_node(s, convert, &ignored);
  if (st == XPACK_OK) st = xp_replay_define_node(s, n, &ignored);
  /* A family the cache does not serve here is not sized: its entries are refused whatever their size, and
   * XNNPACK's failure path is not safe for every family on every CPU (92a7ad50 corrupts its heap when the
   * creation of an fp16 fully-connected node fails on a CPU without fp16 arithmetic). */
  const bool wanted = z->wanted == NULL || s->family_count == 0 ||
                      z->wanted(z->context, &s->families[s->family_count - 1].family);
  if (st == XPACK_OK && wanted) {
    xnn_runtime_t runtime = NULL;
    z->has_pending = false;
    /* A workspace of our own: sizing makes the creation fail on purpose (sizer_reserve_space), and XNNPACK's
     * error path does not free one it made itself. */
    xnn_workspace_t workspace = NULL;
    if (xnn_create_workspace(&workspace) != xnn_status_success) {
      st = xp_fail(&ignored, XPACK_ERR_NOMEM, "%s: node %u (%s): xnn_create_workspace failed", s->graph->name,
                   n->index, n->type_name);
    } else {
      if (xp_create_own_runtime(s->subgraph, &z->provider, workspace, &runtime) == xnn_status_success) {
        xnn_delete_runtime(runtime);
      }
      xnn_release_workspace(workspace);
    }
  }
  xnn_delete_subgraph(s->subgraph);
  s->subgraph = NULL;
  xp_replay_free_scratch(s->scratch);
  s->scratch = NULL;
  if (st == XPACK_ERR_NOMEM) return xp_fail(err, st, "%s", ignored.message);
  return XPACK_OK;
}

static xpack_status size_weights(const xpack_et_xnn_graph* graph, const xpack_et_named_sources* sources,
                                 bool (*wanted)(void*, const xpack_family*), xpack_size_fn report, void* context,
                                 xpack_error* err);

xpack_status xpack_replay_size_weights(const xpack_et_xnn_graph* graph, const xpack_et_named_sources* sources,
                                       xpack_size_fn report, void* context, xpack_error* err) {
  if (graph == NULL || report == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_replay_size_weights: %s is NULL", graph == NULL ? "the graph" : "report");
  }
  return size_weights(graph, sources, NULL, report, context, err);
}

xpack_status xpack_replay_size_weights_for_cache(const xpack_et_xnn_graph* graph, const xpack_et_named_sources* sources,
                                                 struct xpack_cache* cache, xpack_error* err) {
  if (graph == NULL || cache == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_replay_size_weights_for_cache: %s is NULL",
                   graph == NULL ? "the graph" : "the cache");
  }
  return size_weights(graph, sources, xp_replay_cache_serves, xpack_replay_size_to_cache, cache, err);
}

static xpack_status size_weights(const xpack_et_xnn_graph* graph, const xpack_et_named_sources* sources,
                                 bool (*wanted)(void*, const xpack_family*), xpack_size_fn report, void* context,
                                 xpack_error* err) {
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
      .wanted = wanted,
  };
  /* The checks the replay makes before XNNPACK sees anything: a graph that fails them is not sized. */
  xpack_status st = xp_replay_check_graph_values(&s, err);
  for (size_t i = 0; st == XPACK_OK && i < graph->node_count; i++) st = xp_replay_check_node(&s, &graph->nodes[i], err);
  sized_nodes done = {0};
  converts by_output = {NULL, 0};
  if (st == XPACK_OK && !index_converts(graph, &by_output)) st = xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
  for (size_t i = 0; st == XPACK_OK && i < graph->node_count; i++) {
    const xpack_et_xnn_node* n = &graph->nodes[i];
    uint32_t ids[4];
    if (!weight_node_ids(graph, n, ids)) continue;
    const xpack_et_xnn_node* convert = convert_into(graph, &by_output, ids[0]);
    signature g;
    const bool described = signature_of(graph, n, ids, convert, &g);
    const sized_node* twin = described ? find_sized(&done, &g) : NULL;
    if (twin != NULL && (twin->shareable || !twin->reported)) {
      if (twin->reported) {
        const struct xnn_weights_cache_look_up_key key = {
            .seed = twin->seed, .kernel = constant_data(&s, ids[1]), .bias = constant_data(&s, ids[2])};
        report(context, &key, twin->size);
      }
      continue;
    }
    st = size_node(&s, n, ids, convert, &z, err);
    if (st != XPACK_OK || !described || twin != NULL) continue;
    if (done.count == done.capacity) {
      const size_t capacity = done.capacity ? 2 * done.capacity : 16;
      sized_node* grown = realloc(done.items, capacity * sizeof *grown);
      if (grown == NULL) {
        st = xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
        break;
      }
      done.items = grown;
      done.capacity = capacity;
    }
    const bool own_pointers = z.reported && z.last.kernel == constant_data(&s, ids[1]) &&
                              z.last.bias == constant_data(&s, ids[2]);
    done.items[done.count++] = (sized_node){g, z.reported, own_pointers, z.last.seed, z.last_size};
  }
  free(done.items);
  free(by_output.slots);
  xp_replay_free_tables(&s);
  free(s.externals);
  free(s.families);
  return st;
}
