#include "xnn_graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fb_builder.h"
#include "common/le.h"

#define XNN_HEADER_LENGTH 30
#define XNN_HEADER_PADDED 32
#define XNN_CONSTANT_ALIGNMENT 16

static int grow(void** p, size_t* cap, size_t need, size_t elem) {
  if (need <= *cap) return 1;
  size_t nc = *cap ? *cap * 2 : 16;
  while (nc < need) nc *= 2;
  void* np = realloc(*p, nc * elem);
  if (!np) return 0;
  *p = np;
  *cap = nc;
  return 1;
}

void xg_init(xg_graph* g, uint32_t num_inputs, uint32_t num_outputs, uint32_t first_debug_handle) {
  memset(g, 0, sizeof *g);
  g->num_externs = num_inputs + num_outputs;
  g->next_debug_handle = first_debug_handle;
  /* Slot 0 of constant_data means "not a constant". */
  if (!grow((void**)&g->consts, &g->consts_cap, 1, sizeof *g->consts)) g->failed = 1;
  else g->consts[g->nconsts++] = NULL;
  g->num_inputs = num_inputs;
}

void xg_free(xg_graph* g) {
  free(g->values);
  free(g->nodes);
  free(g->consts);
  memset(g, 0, sizeof *g);
}

static xg_value* new_value(xg_graph* g, int16_t datatype, const uint32_t* dims, uint32_t ndims) {
  if (g->failed || ndims > XG_MAX_DIMS || !grow((void**)&g->values, &g->values_cap, g->nvalues + 1, sizeof *g->values)) {
    g->failed = 1;
    return NULL;
  }
  xg_value* v = &g->values[g->nvalues];
  memset(v, 0, sizeof *v);
  v->datatype = datatype;
  v->num_dims = ndims;
  memcpy(v->dims, dims, ndims * sizeof *dims);
  v->external_id = XNN_INVALID_ID;
  v->id_out = (uint32_t)g->nvalues++;
  return v;
}

static uint32_t add_const(xg_graph* g, weight* w) {
  if (!grow((void**)&g->consts, &g->consts_cap, g->nconsts + 1, sizeof *g->consts)) {
    g->failed = 1;
    return 0;
  }
  g->consts[g->nconsts] = w;
  return (uint32_t)g->nconsts++;
}

uint32_t xg_tensor(xg_graph* g, int16_t datatype, const uint32_t* dims, uint32_t ndims) {
  xg_value* v = new_value(g, datatype, dims, ndims);
  return v ? v->id_out : XNN_INVALID_ID;
}

uint32_t xg_input(xg_graph* g, uint32_t k, int16_t datatype, const uint32_t* dims, uint32_t ndims) {
  xg_value* v = new_value(g, datatype, dims, ndims);
  if (!v || g->ninputs >= 16) return g->failed = 1, XNN_INVALID_ID;
  v->external_id = k;
  v->flags = XNN_FLAG_EXTERNAL_INPUT;
  g->input_ids[g->ninputs++] = v->id_out;
  return v->id_out;
}

uint32_t xg_output(xg_graph* g, uint32_t k, int16_t datatype, const uint32_t* dims, uint32_t ndims) {
  xg_value* v = new_value(g, datatype, dims, ndims);
  if (!v || g->noutputs >= 16) return g->failed = 1, XNN_INVALID_ID;
  v->external_id = g->num_inputs + k;
  v->flags = XNN_FLAG_EXTERNAL_OUTPUT;
  g->output_ids[g->noutputs++] = v->id_out;
  return v->id_out;
}

uint32_t xg_constant(xg_graph* g, weight* w, int16_t datatype, const uint32_t* dims, uint32_t ndims) {
  xg_value* v = new_value(g, datatype, dims, ndims);
  if (!v) return XNN_INVALID_ID;
  uint32_t id = v->id_out;
  uint32_t c = add_const(g, w);
  g->values[id].constant_idx = c;
  return id;
}

uint32_t xg_constant_per_channel(xg_graph* g, weight* w, weight* scales, int16_t datatype, const uint32_t* dims,
                                 uint32_t ndims, int32_t channel_dim) {
  uint32_t id = xg_constant(g, w, datatype, dims, ndims);
  if (g->failed) return XNN_INVALID_ID;
  /* The exporter registers the scales right after the weight they belong to. */
  uint32_t s = add_const(g, scales);
  xg_value* v = &g->values[id];
  v->quant = XQ_PER_CHANNEL;
  v->channel_dim = channel_dim;
  v->scale_idx = s;
  v->num_scales = dims[channel_dim];
  return id;
}

uint32_t xg_constant_blockwise(xg_graph* g, weight* w, weight* scales, const uint32_t* dims, int32_t group_size) {
  uint32_t id = xg_constant(g, w, XDT_QBINT4, dims, 2);
  if (g->failed) return XNN_INVALID_ID;
  uint32_t s = add_const(g, scales);
  xg_value* v = &g->values[id];
  v->quant = XQ_PER_CHANNEL_GROUP;
  v->channel_dim = 0;
  v->group_size = group_size;
  v->scale_idx = s;
  v->num_scales = dims[0] * (dims[1] / (uint32_t)group_size);
  return id;
}

uint32_t xg_dynamic_quant(xg_graph* g, const uint32_t* dims, uint32_t ndims, int32_t num_nonbatch_dims) {
  xg_value* v = new_value(g, XDT_QDINT8, dims, ndims);
  if (!v) return XNN_INVALID_ID;
  v->quant = XQ_PER_TOKEN;
  v->num_nonbatch_dims = num_nonbatch_dims;
  return v->id_out;
}

xg_node* xg_node_add(xg_graph* g, uint8_t type) {
  if (g->failed || !grow((void**)&g->nodes, &g->nodes_cap, g->nnodes + 1, sizeof *g->nodes)) {
    g->failed = 1;
    return NULL;
  }
  xg_node* n = &g->nodes[g->nnodes++];
  memset(n, 0, sizeof *n);
  n->type = type;
  n->vec_slot = -1;
  n->debug_handle = g->next_debug_handle++;
  return n;
}

void xg_node_1x1(xg_graph* g, uint8_t type, uint32_t in, uint32_t out, uint32_t flags) {
  xg_node* n = xg_node_add(g, type);
  if (!n) return;
  n->nfields = 3;
  n->fields[0] = in;
  n->fields[1] = out;
  n->fields[2] = flags;
}

void xg_node_2x1(xg_graph* g, uint8_t type, uint32_t a, uint32_t b, uint32_t out) {
  xg_node* n = xg_node_add(g, type);
  if (!n) return;
  n->nfields = 4;
  n->fields[0] = a;
  n->fields[1] = b;
  n->fields[2] = out;
}

xg_node* xg_fully_connected(xg_graph* g, uint32_t in, uint32_t filter, uint32_t bias, uint32_t out) {
  xg_node* n = xg_node_add(g, XN_FULLY_CONNECTED);
  if (!n) return NULL;
  n->nfields = 5;
  n->fields[0] = in;
  n->fields[1] = filter;
  n->fields[2] = bias;
  n->fields[3] = out;
  return n;
}

/* Layout-changing nodes inserted by the channels-last pass carry no source debug handle. */
static void shape_node(xg_graph* g, uint8_t type, const uint32_t* v, uint32_t n, uint32_t in, uint32_t out,
                       int synthetic) {
  xg_node* node = xg_node_add(g, type);
  if (!node || n > XG_MAX_DIMS) return;
  if (synthetic) {
    g->next_debug_handle--;
    node->debug_handle = 65535;
  }
  node->nfields = 5;
  node->fields[0] = n;
  node->vec_slot = 1;
  memcpy(node->vec, v, n * sizeof *v);
  node->vec_len = (int)n;
  node->fields[2] = in;
  node->fields[3] = out;
}

void xg_transpose(xg_graph* g, const uint32_t* perm, uint32_t n, uint32_t in, uint32_t out) {
  shape_node(g, XN_STATIC_TRANSPOSE, perm, n, in, out, 1);
}

void xg_reshape(xg_graph* g, const uint32_t* shape, uint32_t n, uint32_t in, uint32_t out) {
  shape_node(g, XN_STATIC_RESHAPE, shape, n, in, out, 0);
}

xg_node* xg_conv(xg_graph* g, uint8_t type, const xg_conv_params* p, uint32_t in, uint32_t filter, uint32_t bias,
                 uint32_t out) {
  xg_node* n = xg_node_add(g, type);
  if (!n) return NULL;
  uint32_t f[20] = {p->pad_top,   p->pad_right,  p->pad_bottom, p->pad_left,   p->kernel_h,
                    p->kernel_w,  p->stride_h,   p->stride_w,   p->dilation_h, p->dilation_w,
                    p->group_in,  p->group_out,  p->groups,     p->adjust_h,   p->adjust_w,
                    in,           filter,        bias,          out,           0};
  n->nfields = 20;
  memcpy(n->fields, f, sizeof f);
  return n;
}

void xg_set_min_max(xg_node* n, float lo, float hi) {
  if (!n) return;
  n->has_min_max = 1;
  n->out_min = lo;
  n->out_max = hi;
}

static fb_ref ser_tensor_value(fb_builder* b, const xg_value* v) {
  fb_ref dims = fb_vec_u32(b, v->dims, v->num_dims);
  fb_table_begin(b);
  fb_add_i16(b, 0, v->datatype, 0);
  fb_add_u32(b, 1, v->num_dims, 0);
  fb_add_ref(b, 2, dims);
  fb_add_u32(b, 3, v->constant_idx, 0);
  fb_add_u32(b, 4, v->external_id, 0);
  fb_add_u32(b, 5, v->flags, 0);
  fb_add_u32(b, 6, v->id_out, 0);
  return fb_table_end(b);
}

static fb_ref ser_quant_params(fb_builder* b, const xg_value* v, uint8_t* type) {
  fb_ref empty;
  switch (v->quant) {
    case XQ_PER_CHANNEL:
      *type = 1;
      empty = fb_vec_f32(b, NULL, 0); /* the exporter writes "scale": [] when scales are a buffer */
      fb_table_begin(b);
      fb_add_ref(b, 0, empty);
      fb_add_i32(b, 1, v->channel_dim, 0);
      fb_add_u32(b, 2, v->scale_idx, 0);
      fb_add_u32(b, 3, v->num_scales, 0);
      return fb_table_end(b);
    case XQ_PER_TENSOR:
      *type = 2;
      fb_table_begin(b);
      fb_add_f32(b, 0, v->tensor_scale, 0.0f);
      fb_add_i32(b, 1, v->zero_point, 0);
      return fb_table_end(b);
    case XQ_PER_TOKEN:
      *type = 3;
      fb_table_begin(b);
      fb_add_i32(b, 0, v->num_nonbatch_dims, 0);
      return fb_table_end(b);
    case XQ_PER_CHANNEL_GROUP:
      *type = 4;
      empty = fb_vec_f32(b, NULL, 0);
      fb_table_begin(b);
      fb_add_ref(b, 0, empty);
      fb_add_i32(b, 1, v->channel_dim, 0);
      fb_add_i32(b, 2, v->group_size, 0);
      fb_add_u32(b, 4, v->scale_idx, 0);
      fb_add_u32(b, 5, v->num_scales, 0);
      return fb_table_end(b);
    case XQ_NONE: break;
  }
  *type = 0;
  return 0;
}

static fb_ref ser_value(fb_builder* b, const xg_value* v) {
  fb_ref tv = ser_tensor_value(b, v);
  uint8_t union_type = 1;
  fb_ref u = tv;
  if (v->quant != XQ_NONE) {
    uint8_t qtype;
    fb_ref q = ser_quant_params(b, v, &qtype);
    fb_table_begin(b);
    fb_add_ref(b, 0, tv);
    fb_add_u8(b, 1, qtype, 0);
    fb_add_ref(b, 2, q);
    u = fb_table_end(b);
    union_type = 2;
  }
  fb_table_begin(b);
  fb_add_u8(b, 0, union_type, 0);
  fb_add_ref(b, 1, u);
  return fb_table_end(b);
}

static fb_ref ser_node(fb_builder* b, const xg_node* n) {
  fb_ref vec = n->vec_slot >= 0 ? fb_vec_u32(b, n->vec, (size_t)n->vec_len) : 0;
  fb_table_begin(b);
  for (int i = 0; i < n->nfields; i++) {
    if (i == n->vec_slot) fb_add_ref(b, i, vec);
    else fb_add_u32(b, i, n->fields[i], 0);
  }
  fb_ref body = fb_table_end(b);
  fb_ref mm = 0;
  if (n->has_min_max) {
    fb_table_begin(b);
    fb_add_f32(b, 0, n->out_min, 0.0f);
    fb_add_f32(b, 1, n->out_max, 0.0f);
    mm = fb_table_end(b);
  }
  fb_table_begin(b);
  fb_add_u8(b, 0, n->type, 0);
  fb_add_ref(b, 1, body);
  fb_add_u32(b, 2, n->debug_handle, 0);
  fb_add_ref(b, 3, mm);
  return fb_table_end(b);
}

static fb_ref ser_constant(fb_builder* b, const weight* w) {
  fb_ref key = w ? fb_cstring(b, w->key) : fb_cstring(b, "");
  fb_table_begin(b);
  if (w) {
    /* Named constants carry no offset into the blob: the exporter writes UINT64_MAX. */
    fb_add_u64(b, 0, UINT64_MAX, 0);
    fb_add_u64(b, 1, w->nbytes, 0);
  }
  fb_add_ref(b, 2, key);
  return fb_table_end(b);
}

uint8_t* xg_blob(const xg_graph* g, size_t* size) {
  if (g->failed) return NULL;
  for (size_t i = 1; i < g->nconsts; i++)
    if (!g->consts[i]->hashed) return NULL;
  fb_builder b;
  fb_init(&b);
  fb_ref* refs = malloc((g->nvalues + g->nnodes + g->nconsts + 1) * sizeof *refs);
  if (!refs) return NULL;

  for (size_t i = 0; i < g->nconsts; i++) refs[i] = ser_constant(&b, g->consts[i]);
  fb_ref consts = fb_vec_ref(&b, refs, g->nconsts);
  fb_ref outs = fb_vec_u32(&b, g->output_ids, (size_t)g->noutputs);
  fb_ref ins = fb_vec_u32(&b, g->input_ids, (size_t)g->ninputs);
  for (size_t i = 0; i < g->nvalues; i++) refs[i] = ser_value(&b, &g->values[i]);
  fb_ref values = fb_vec_ref(&b, refs, g->nvalues);
  for (size_t i = 0; i < g->nnodes; i++) refs[i] = ser_node(&b, &g->nodes[i]);
  fb_ref nodes = fb_vec_ref(&b, refs, g->nnodes);
  fb_ref version = fb_cstring(&b, "0");
  free(refs);

  fb_table_begin(&b);
  fb_add_ref(&b, 0, version);
  fb_add_ref(&b, 1, nodes);
  fb_add_ref(&b, 2, values);
  fb_add_u32(&b, 3, g->num_externs, 0);
  fb_add_ref(&b, 4, ins);
  fb_add_ref(&b, 5, outs);
  fb_add_ref(&b, 8, consts);
  fb_ref root = fb_table_end(&b);
  size_t fb_size;
  const uint8_t* fb = fb_finish(&b, root, "XN01", &fb_size);
  if (!fb) {
    fb_free(&b);
    return NULL;
  }
  size_t padded = (fb_size + XNN_CONSTANT_ALIGNMENT - 1) & ~(size_t)(XNN_CONSTANT_ALIGNMENT - 1);
  size_t total = XNN_HEADER_PADDED + padded; /* the constant region is empty: weights are named data */
  uint8_t* blob = calloc(1, total);
  if (blob) {
    memcpy(blob + 4, "XH00", 4);
    xp_put16(blob + 8, XNN_HEADER_LENGTH);
    xp_put32(blob + 10, XNN_HEADER_PADDED);
    xp_put32(blob + 14, (uint32_t)fb_size);
    xp_put32(blob + 18, (uint32_t)(XNN_HEADER_PADDED + padded));
    xp_put64(blob + 22, 0);
    memcpy(blob + XNN_HEADER_PADDED, fb, fb_size);
    *size = total;
  }
  fb_free(&b);
  return blob;
}
