/* LLM-like programs: a stack of decoder-ish layers lowered to one XNNPACK delegate per method.
 * Attention itself is a custom op outside XNNPACK in real exports; here it is stood in for by
 * elementwise nodes so the graph stays a valid XNNPACK subgraph while every projection is the
 * FullyConnected the packer must handle. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"

#define LLM_PREFILL_TOKENS 8
#define LLM_DEFAULT_SIZE (2u << 20)
#define LLM_MAX_LAYERS 1024 /* --layers; from --size alone at most 24 */

enum { ROLE_Q, ROLE_K, ROLE_V, ROLE_O, ROLE_GATE, ROLE_UP, ROLE_DOWN, ROLE_HEAD, PROJECTIONS };
enum { ROLE_SCALE_OFFSET = 100 };

typedef enum llm_quant { LQ_FP32, LQ_QC4, LQ_QB4 } llm_quant;

typedef struct llm_proj {
  weight* w;
  weight* scales; /* quantized kinds */
  llm_quant quant;
  uint32_t in, out;
} llm_proj;

typedef struct llm_model {
  uint32_t layers, dim, ffn, vocab, group_size;
  int quantized;
  llm_proj proj[LLM_MAX_LAYERS][PROJECTIONS - 1];
  llm_proj head;
} llm_model;

static uint32_t round_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

/* Layers grow with log2(size), width with sqrt(size), so kilobytes give a 2-layer toy and
 * gigabytes a deep, wide stack. */
static void llm_shape(llm_model* m, uint64_t size, double bytes_per_param, uint32_t fixed_layers) {
  int layers = 0;
  for (uint64_t s = size >> 16; s > 1; s >>= 1) layers++;
  if (layers < 2) layers = 2;
  if (layers > 24) layers = 24;
  if (fixed_layers != 0) layers = (int)(fixed_layers < LLM_MAX_LAYERS ? fixed_layers : LLM_MAX_LAYERS);
  m->layers = (uint32_t)layers;
  /* per layer: q,k,v,o = 4*D*D, gate/up/down = 3*D*F with F ~ 8D/3; head V = 2D */
  double d = sqrt((double)size / (bytes_per_param * (12.0 * layers + 2.0)));
  /* Widths are multiples of 64 like real models; tiny sizes (kilobytes) fall back to multiples of 16. */
  uint32_t step = d >= 64.0 ? 64 : 16;
  uint32_t dim = (uint32_t)(d / step) * step;
  m->dim = dim < 16 ? 16 : dim;
  m->ffn = round_up(m->dim * 8 / 3, step);
  m->vocab = 2 * m->dim;
}

/* A module path made `length` bytes long by 'm' characters and a '.' in front of it (as a deeply nested module's
 * path is long), for the limits on identities; unchanged when length is 0 or not longer than the name. */
static void pad_key(char* name, size_t capacity, uint32_t length) {
  const size_t len = strlen(name);
  if (length <= len + 1 || length >= capacity) return;
  const size_t pad = length - len - 1;
  memmove(name + pad + 1, name, len + 1);
  memset(name, 'm', pad);
  name[pad] = '.';
}

static int make_proj(const gen_options* o, weight_pool* pool, llm_proj* pr, uint32_t role, uint32_t layer,
                     uint32_t in, uint32_t out, llm_quant q, uint32_t group_size) {
  pr->in = in;
  pr->out = out;
  pr->quant = q;
  pr->w = pool_new(pool);
  if (!pr->w) return 0;
  uint64_t seed = tensor_seed(o->seed, role, layer);
  if (role == ROLE_HEAD && o->variant != 'A') seed = tensor_seed(seed, 0x76617269u /* "vari" */, (uint32_t)o->variant);
  float std = 1.0f / sqrtf((float)in);
  static const char* const kRoleNames[PROJECTIONS] = {"q", "k", "v", "o", "gate", "up", "down", "head"};
  switch (q) {
    case LQ_FP32: weight_set(pr->w, WF_F32, seed, out, in, std); break;
    case LQ_QC4: weight_set(pr->w, WF_QC4, seed, out, in, 0); break;
    case LQ_QB4: weight_set(pr->w, WF_QC4, seed, out, in, 0); break;
  }
  if (o->name_keys) snprintf(pr->w->name, sizeof pr->w->name, "layers.%u.%s.weight", (unsigned)layer, kRoleNames[role]);
  if (o->name_keys) pad_key(pr->w->name, sizeof pr->w->name, o->key_length);
  if (q == LQ_FP32) return 1;
  pr->scales = pool_new(pool);
  if (!pr->scales) return 0;
  uint64_t sseed = tensor_seed(seed, ROLE_SCALE_OFFSET, 0);
  if (o->name_keys)
    snprintf(pr->scales->name, sizeof pr->scales->name, "layers.%u.%s.scale", (unsigned)layer, kRoleNames[role]);
  if (o->name_keys) pad_key(pr->scales->name, sizeof pr->scales->name, o->key_length);
  /* int4 values spread ~2.5 around zero, so scale ~ weight stddev / 2.5 */
  if (q == LQ_QC4) weight_set(pr->scales, WF_SCALE_F32, sseed, 1, out, std / 2.5f);
  else weight_set(pr->scales, WF_SCALE_BF16, sseed, out, in / group_size, std / 2.5f);
  return 1;
}

static int llm_model_init(const gen_options* o, weight_pool* pool, llm_model* m, int quantized) {
  memset(m, 0, sizeof *m);
  uint64_t size = o->size ? o->size : (uint64_t)LLM_DEFAULT_SIZE * (o->scale ? o->scale : 1);
  m->quantized = quantized;
  m->group_size = o->group_size ? o->group_size : 32;
  llm_shape(m, size, quantized ? 0.5 : 4.0, o->layers);
  if (quantized) { /* blockwise layers need whole groups along every input width */
    m->dim = round_up(m->dim, m->group_size);
    m->ffn = round_up(m->ffn, m->group_size);
    m->vocab = 2 * m->dim;
  }
  for (uint32_t l = 0; l < m->layers; l++) {
    llm_quant q = !quantized ? LQ_FP32 : (l % 2 ? LQ_QB4 : LQ_QC4);
    uint32_t D = m->dim, F = m->ffn;
    uint32_t in[PROJECTIONS - 1] = {D, D, D, D, D, D, F};
    uint32_t out[PROJECTIONS - 1] = {D, D, D, D, F, F, D};
    for (int r = 0; r < PROJECTIONS - 1; r++)
      if (!make_proj(o, pool, &m->proj[l][r], (uint32_t)r, l, in[r], out[r], q, m->group_size)) return 0;
  }
  return make_proj(o, pool, &m->head, ROLE_HEAD, 0, m->dim, m->vocab, quantized ? LQ_QC4 : LQ_FP32, m->group_size);
}

/* x [T, in] -> FullyConnected (no bias, as in LLM projections) -> [T, out]. */
static uint32_t llm_fc(xg_graph* g, uint32_t x, uint32_t T, const llm_proj* pr, int external_output) {
  uint32_t in_dims[2] = {T, pr->in};
  uint32_t w_dims[2] = {pr->out, pr->in};
  uint32_t out_dims[2] = {T, pr->out};
  uint32_t input = x, filter;
  if (pr->quant != LQ_FP32) {
    input = xg_dynamic_quant(g, in_dims, 2, 1);
    xg_node_1x1(g, XN_CONVERT, x, input, 0);
  }
  switch (pr->quant) {
    case LQ_FP32: filter = xg_constant(g, pr->w, XDT_FP32, w_dims, 2); break;
    case LQ_QC4: filter = xg_constant_per_channel(g, pr->w, pr->scales, XDT_QCINT4, w_dims, 2, 0); break;
    default: filter = xg_constant_blockwise(g, pr->w, pr->scales, w_dims, (int32_t)(pr->in / pr->scales->cols));
  }
  uint32_t out = external_output ? xg_output(g, 0, XDT_FP32, out_dims, 2) : xg_tensor(g, XDT_FP32, out_dims, 2);
  xg_fully_connected(g, input, filter, XNN_INVALID_ID, out);
  return out;
}

static uint32_t llm_binary_to(xg_graph* g, uint8_t type, uint32_t a, uint32_t b, uint32_t out) {
  xg_node_2x1(g, type, a, b, out);
  return out;
}

static uint32_t llm_binary(xg_graph* g, uint8_t type, uint32_t a, uint32_t b, uint32_t T, uint32_t n) {
  uint32_t dims[2] = {T, n};
  return llm_binary_to(g, type, a, b, xg_tensor(g, XDT_FP32, dims, 2));
}

/* Layers [first, end) as one delegate; the slice that ends the stack also holds the head. The slice's
 * input is [T, dim]; its output is the head's [T, vocab], or [T, dim] for the next slice. */
static void llm_graph(xg_graph* g, const llm_model* m, uint32_t T, uint32_t first, uint32_t end) {
  xg_init(g, 1, 1, 1);
  uint32_t x_dims[2] = {T, m->dim};
  uint32_t x = xg_input(g, 0, XDT_FP32, x_dims, 2);
  const int with_head = end == m->layers;
  for (uint32_t l = first; l < end; l++) {
    const llm_proj* p = m->proj[l];
    uint32_t D = m->dim, F = m->ffn;
    uint32_t q = llm_fc(g, x, T, &p[ROLE_Q], 0);
    uint32_t k = llm_fc(g, x, T, &p[ROLE_K], 0);
    uint32_t v = llm_fc(g, x, T, &p[ROLE_V], 0);
    uint32_t attn = llm_binary(g, XN_ADD, llm_binary(g, XN_MULTIPLY, q, k, T, D), v, T, D);
    uint32_t h = llm_binary(g, XN_ADD, x, llm_fc(g, attn, T, &p[ROLE_O], 0), T, D);
    uint32_t gate = llm_fc(g, h, T, &p[ROLE_GATE], 0);
    uint32_t up = llm_fc(g, h, T, &p[ROLE_UP], 0);
    uint32_t f_dims[2] = {T, F};
    uint32_t sig = xg_tensor(g, XDT_FP32, f_dims, 2);
    xg_node_1x1(g, XN_SIGMOID, gate, sig, 0);
    uint32_t silu = llm_binary(g, XN_MULTIPLY, gate, sig, T, F);
    uint32_t mlp = llm_fc(g, llm_binary(g, XN_MULTIPLY, silu, up, T, F), T, &p[ROLE_DOWN], 0);
    const int slice_output = !with_head && l + 1 == end;
    x = slice_output ? llm_binary_to(g, XN_ADD, h, mlp, xg_output(g, 0, XDT_FP32, x_dims, 2))
                     : llm_binary(g, XN_ADD, h, mlp, T, D);
  }
  if (with_head) llm_fc(g, x, T, &m->head, 1);
}

/* One method, its layers cut into `delegates` consecutive slices chained through method values, as
 * ExecuTorch lowers a graph that something outside XNNPACK interrupts. */
static int llm_method(pte_program* p, const llm_model* m, const char* name, uint32_t T, uint32_t delegates,
                      uint32_t repeat) {
  if (delegates == 0) delegates = 1;
  if (delegates > m->layers) delegates = m->layers;
  pte_method* method = pte_add_method(p, name);
  if (!method) return 0;
  int values[PTE_MAX_CALLS + 1];
  for (uint32_t i = 0; i <= delegates; i++) {
    int32_t sizes[2] = {(int32_t)T, (int32_t)(i == delegates ? m->vocab : m->dim)};
    if ((values[i] = pte_add_value(method, ST_FLOAT, sizes, 2)) < 0) return 0;
  }
  pte_method_io(method, &values[0], 1, &values[delegates], 1);
  for (uint32_t i = 0; i < delegates; i++) {
    xg_graph g;
    llm_graph(&g, m, T, m->layers * i / delegates, m->layers * (i + 1) / delegates);
    int args[2] = {values[i], values[i + 1]};
    int ok = pte_add_delegate(p, method, &g, args, 2);
    /* Further calls of the first slice: delegate entries that all name its one blob. */
    for (uint32_t r = 1; ok && i == 0 && r < repeat; r++) ok = pte_add_delegate(p, method, &g, args, 2);
    xg_free(&g);
    if (!ok) return 0;
  }
  return 1;
}

static int build(const gen_options* o, weight_pool* pool, pte_program* p, int quantized) {
  llm_model* m = calloc(1, sizeof *m);
  if (!m) return 0;
  const uint32_t d = o->delegates;
  int ok = llm_model_init(o, pool, m, quantized) && llm_method(p, m, "prefill", LLM_PREFILL_TOKENS, d, 1) &&
           llm_method(p, m, "decode", 1, d, o->repeat_calls) &&
           (!o->alias_decode || llm_method(p, m, "decode_alias", 1, d, 1));
  free(m);
  return ok;
}

int build_llm(const gen_options* o, weight_pool* pool, pte_program* p) { return build(o, pool, p, 0); }
int build_llm_q4(const gen_options* o, weight_pool* pool, pte_program* p) { return build(o, pool, p, 1); }
