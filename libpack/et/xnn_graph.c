/* XNNPACK delegate blob reader: the XH00 header and the XNNGraph flatbuffer (values, nodes,
 * external ids, constant tables) turned into plain arrays a replay step can walk. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "et/flatbuf.h"
#include "common/le.h"
#include "et/xnn_graph_internal.h"

#define XH00_MIN_LENGTH 30

enum {
  GRAPH_VERSION = 0,
  GRAPH_XNODES = 1,
  GRAPH_XVALUES = 2,
  GRAPH_NUM_EXTERNS = 3,
  GRAPH_INPUT_IDS = 4,
  GRAPH_OUTPUT_IDS = 5,
  GRAPH_CONSTANT_BUFFER = 6,
  GRAPH_CONSTANT_DATA = 8,
  XVALUE_UNION_TYPE = 0,
  XVALUE_UNION_VALUE = 1,
  TV_DATATYPE = 0,
  TV_NUM_DIMS = 1,
  TV_DIMS = 2,
  TV_CONSTANT_BUFFER_IDX = 3,
  TV_EXTERNAL_ID = 4,
  TV_FLAGS = 5,
  TV_ID_OUT = 6,
  TV_DQ_DATATYPE = 7,
  QTV_TENSOR_VALUE = 0,
  QTV_QUANT_TYPE = 1,
  QTV_QUANT_VALUE = 2,
  PCQ_SCALE = 0,
  PCQ_CHANNEL_DIM = 1,
  PCQ_SCALE_BUFFER_IDX = 2,
  PCQ_NUM_SCALES = 3,
  PTQ_SCALE = 0,
  PTQ_ZERO_POINT = 1,
  PTDQ_NUM_NONBATCH_DIMS = 0,
  PCGQ_SCALE = 0,
  PCGQ_CHANNEL_DIM = 1,
  PCGQ_GROUP_SIZE = 2,
  PCGQ_SCALE_BUFFER_IDX = 4,
  PCGQ_NUM_SCALES = 5,
  XNODE_UNION_TYPE = 0,
  XNODE_UNION_VALUE = 1,
  XNODE_DEBUG_HANDLE = 2,
  XNODE_OUTPUT_MIN_MAX = 3,
  OMM_MIN = 0,
  OMM_MAX = 1,
  CDO_OFFSET = 0,
  CDO_SIZE = 1,
  CDO_NAMED_KEY = 2,
  BUFFER_STORAGE = 0,
  XVALUE_TYPE_TENSOR = 1,
  XVALUE_TYPE_QUANTIZED = 2,
  QUANT_TYPE_MAX = 4,
};

/* Copies a [uint] vector into the arena. */
static bool copy_u32s(xp_xnn_graph* g, xp_fb* fb, const xp_fb_vec* v, xpack_et_u32_array* out) {
  out->data = NULL;
  out->count = v->count;
  if (v->count == 0) return true;
  /* Charged, so that values or nodes sharing one long array cannot multiply its copies. */
  if (!xp_fb_charge(fb, (uint64_t)v->count * 4, v->path, NULL)) return false;
  uint32_t* a = xp_arena_array(&g->arena, v->count, sizeof *a);
  if (!a) {
    xp_fb_fail(fb, XPACK_ERR_NOMEM, v->path, NULL, "out of memory for %u elements", (unsigned)v->count);
    return false;
  }
  for (uint32_t i = 0; i < v->count; i++) a[i] = xp_fb_vec_u32(v, i);
  out->data = a;
  return true;
}

static void read_tensor_value(xp_xnn_graph* g, xp_fb* fb, const xp_fb_table* t, xpack_et_xnn_value* v) {
  v->datatype = xp_fb_i16(t, TV_DATATYPE, 0, "datatype");
  v->datatype_name = xpack_et_xnn_datatype_name(v->datatype);
  v->num_dims = xp_fb_u32(t, TV_NUM_DIMS, 0, "num_dims");
  v->constant_buffer_idx = xp_fb_u32(t, TV_CONSTANT_BUFFER_IDX, 0, "constant_buffer_idx");
  v->external_id = xp_fb_u32(t, TV_EXTERNAL_ID, 0, "external_id");
  v->flags = xp_fb_u32(t, TV_FLAGS, 0, "flags");
  v->id_out = xp_fb_u32(t, TV_ID_OUT, 0, "id_out");
  v->dq_datatype = xp_fb_i16(t, TV_DQ_DATATYPE, 0, "dq_datatype");
  xp_fb_vec dims;
  xp_fb_vector(t, TV_DIMS, 4, "dims", &dims);
  xpack_et_u32_array a;
  if (xp_fb_failed(fb) || !copy_u32s(g, fb, &dims, &a)) return;
  v->dims = a.data;
  if (v->num_dims != dims.count) {
    xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, t->path, "num_dims", "%u but dims has %u entries", (unsigned)v->num_dims,
               (unsigned)dims.count);
  }
}

static void read_scales(xp_fb* fb, const xp_fb_table* q, unsigned id, xpack_et_xnn_quant* out) {
  xp_fb_vec s;
  xp_fb_vector(q, id, 4, "scale", &s);
  out->scale_count = s.count;
  out->scales = xp_fb_vec_f32_ptr(&s);
}

static void read_quant(xp_fb* fb, const xp_fb_table* qtv, xpack_et_xnn_value* v) {
  xp_fb_table q;
  uint8_t type = xp_fb_union(qtv, QTV_QUANT_TYPE, QTV_QUANT_VALUE, QUANT_TYPE_MAX, "quant_params", &q);
  if (xp_fb_failed(fb)) return;
  xpack_et_xnn_quant* out = &v->quant;
  out->kind = (xpack_et_xnn_quant_kind)type;
  switch (type) {
    case XPACK_ET_XNN_QUANT_PER_CHANNEL:
      read_scales(fb, &q, PCQ_SCALE, out);
      out->channel_dim = xp_fb_i32(&q, PCQ_CHANNEL_DIM, 0, "channel_dim");
      out->scale_buffer_idx = xp_fb_u32(&q, PCQ_SCALE_BUFFER_IDX, 0, "scale_buffer_idx");
      out->num_scales = xp_fb_u32(&q, PCQ_NUM_SCALES, 0, "num_scales");
      break;
    case XPACK_ET_XNN_QUANT_PER_TENSOR:
      out->scale = xp_fb_f32(&q, PTQ_SCALE, 0.0f, "scale");
      out->zero_point = xp_fb_i32(&q, PTQ_ZERO_POINT, 0, "zero_point");
      break;
    case XPACK_ET_XNN_QUANT_PER_TOKEN_DYNAMIC:
      out->num_nonbatch_dims = xp_fb_i32(&q, PTDQ_NUM_NONBATCH_DIMS, 0, "num_nonbatch_dims");
      break;
    case XPACK_ET_XNN_QUANT_PER_CHANNEL_GROUP:
      read_scales(fb, &q, PCGQ_SCALE, out);
      out->channel_dim = xp_fb_i32(&q, PCGQ_CHANNEL_DIM, 0, "channel_dim");
      out->group_size = xp_fb_i32(&q, PCGQ_GROUP_SIZE, 0, "group_size");
      out->scale_buffer_idx = xp_fb_u32(&q, PCGQ_SCALE_BUFFER_IDX, 0, "scale_buffer_idx");
      out->num_scales = xp_fb_u32(&q, PCGQ_NUM_SCALES, 0, "num_scales");
      break;
    default:
      xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, qtv->path, "quant_params", "missing on a quantized tensor value");
      break;
  }
}

static xpack_status read_values(xp_xnn_graph* g, xp_fb* fb, const xp_fb_table* root) {
  xp_fb_vec v;
  xp_fb_vector(root, GRAPH_XVALUES, 4, "xvalues", &v);
  if (xp_fb_failed(fb) || v.count == 0) return fb->status;
  if (!xp_fb_charge(fb, (uint64_t)v.count * 4, "", "xvalues")) return fb->status;
  xpack_et_xnn_value* values = xp_arena_array(&g->arena, v.count, sizeof *values);
  if (!values) return xp_fb_fail(fb, XPACK_ERR_NOMEM, "", "xvalues", "out of memory for %u values", v.count);
  g->pub.values = values;
  g->pub.value_count = v.count;
  for (uint32_t i = 0; i < v.count && !xp_fb_failed(fb); i++) {
    xp_fb_table xv, body;
    xp_fb_vec_table(&v, i, &xv);
    values[i].index = i;
    uint8_t type = xp_fb_union(&xv, XVALUE_UNION_TYPE, XVALUE_UNION_VALUE, XVALUE_TYPE_QUANTIZED, "xvalue_union", &body);
    if (xp_fb_failed(fb)) break;
    if (type == XVALUE_TYPE_TENSOR) {
      read_tensor_value(g, fb, &body, &values[i]);
    } else if (type == XVALUE_TYPE_QUANTIZED) {
      xp_fb_table tv;
      if (!xp_fb_child(&body, QTV_TENSOR_VALUE, "tensor_value", &tv)) {
        xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, body.path, "tensor_value", "missing on a quantized tensor value");
        break;
      }
      read_tensor_value(g, fb, &tv, &values[i]);
      read_quant(fb, &body, &values[i]);
    } else {
      xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, xv.path, "xvalue_union", "missing (type NONE)");
    }
  }
  return fb->status;
}

static xpack_status read_node(xp_xnn_graph* g, xp_fb* fb, const xp_fb_table* xn, xpack_et_xnn_node* n) {
  xp_fb_table body;
  uint8_t type = xp_fb_union(xn, XNODE_UNION_TYPE, XNODE_UNION_VALUE, XPACK_ET_XNN_NODE_TYPE_MAX, "xnode_union", &body);
  if (xp_fb_failed(fb)) return fb->status;
  if (type == 0) return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, xn->path, "xnode_union", "missing (type NONE)");
  n->type = type;
  n->type_name = xpack_et_xnn_node_type_name(type);
  n->layout = xpack_et_xnn_node_layout(type);
  n->debug_handle = xp_fb_u32(xn, XNODE_DEBUG_HANDLE, 0, "debug_handle");
  xp_fb_table mm;
  n->output_min = -INFINITY;
  n->output_max = INFINITY;
  if (xp_fb_child(xn, XNODE_OUTPUT_MIN_MAX, "output_min_max", &mm)) {
    n->has_output_min_max = true;
    n->output_min = xp_fb_f32(&mm, OMM_MIN, 0.0f, "output_min");
    n->output_max = xp_fb_f32(&mm, OMM_MAX, 0.0f, "output_max");
  }
  size_t count = 0;
  const xpack_et_xnn_field* fields = xpack_et_xnn_layout_fields(n->layout, &count);
  for (size_t i = 0; i < count && !xp_fb_failed(fb); i++) {
    unsigned char* dst = (unsigned char*)n + fields[i].offset;
    if (fields[i].kind == XPACK_ET_XNN_FIELD_F32) {
      float f = xp_fb_f32(&body, (unsigned)i, 0.0f, fields[i].name);
      memcpy(dst, &f, sizeof f);
    } else if (fields[i].kind == XPACK_ET_XNN_FIELD_U32_ARRAY) {
      xp_fb_vec v;
      xpack_et_u32_array a = {0};
      xp_fb_vector(&body, (unsigned)i, 4, fields[i].name, &v);
      if (!xp_fb_failed(fb)) copy_u32s(g, fb, &v, &a);
      memcpy(dst, &a, sizeof a);
    } else {
      uint32_t u = xp_fb_u32(&body, (unsigned)i, 0, fields[i].name);
      memcpy(dst, &u, sizeof u);
    }
  }
  return fb->status;
}

/* Array-length fields that XNNPACK reads num_dims entries of must agree with their arrays. */
static xpack_status check_node_arrays(xp_fb* fb, const char* path, const xpack_et_xnn_node* n) {
  switch (n->layout) {
    case XPACK_ET_XNN_LAYOUT_STATIC_TRANSPOSE:
      if (n->u.transpose.num_dims != n->u.transpose.perm.count) {
        return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, "num_dims", "%u but perm has %u entries",
                          (unsigned)n->u.transpose.num_dims, (unsigned)n->u.transpose.perm.count);
      }
      break;
    case XPACK_ET_XNN_LAYOUT_STATIC_RESHAPE:
      if (n->u.reshape.num_dims != n->u.reshape.new_shape.count) {
        return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, "num_dims", "%u but new_shape has %u entries",
                          (unsigned)n->u.reshape.num_dims, (unsigned)n->u.reshape.new_shape.count);
      }
      break;
    case XPACK_ET_XNN_LAYOUT_STATIC_SLICE:
      if (n->u.slice.num_dims != n->u.slice.offsets.count || n->u.slice.num_dims != n->u.slice.sizes.count) {
        return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, "num_dims", "%u but offsets has %u and sizes %u entries",
                          (unsigned)n->u.slice.num_dims, (unsigned)n->u.slice.offsets.count,
                          (unsigned)n->u.slice.sizes.count);
      }
      break;
    case XPACK_ET_XNN_LAYOUT_STATIC_CONSTANT_PAD:
      if (n->u.constant_pad.pre_paddings.count != n->u.constant_pad.post_paddings.count) {
        return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, "post_paddings", "%u entries but pre_paddings has %u",
                          (unsigned)n->u.constant_pad.post_paddings.count,
                          (unsigned)n->u.constant_pad.pre_paddings.count);
      }
      break;
    default:
      break;
  }
  return XPACK_OK;
}

static xpack_status read_nodes(xp_xnn_graph* g, xp_fb* fb, const xp_fb_table* root) {
  xp_fb_vec v;
  xp_fb_vector(root, GRAPH_XNODES, 4, "xnodes", &v);
  if (xp_fb_failed(fb) || v.count == 0) return fb->status;
  if (!xp_fb_charge(fb, (uint64_t)v.count * 4, "", "xnodes")) return fb->status;
  xpack_et_xnn_node* nodes = xp_arena_array(&g->arena, v.count, sizeof *nodes);
  if (!nodes) return xp_fb_fail(fb, XPACK_ERR_NOMEM, "", "xnodes", "out of memory for %u nodes", v.count);
  g->pub.nodes = nodes;
  g->pub.node_count = v.count;
  for (uint32_t i = 0; i < v.count; i++) {
    xp_fb_table xn;
    nodes[i].index = i;
    xp_fb_vec_table(&v, i, &xn);
    if (read_node(g, fb, &xn, &nodes[i]) != XPACK_OK) break;
    if (check_node_arrays(fb, xn.path, &nodes[i]) != XPACK_OK) break;
  }
  return fb->status;
}

static xpack_status read_constant_tables(xp_xnn_graph* g, xp_fb* fb, const xp_fb_table* root) {
  xp_fb_vec v;
  xp_fb_vector(root, GRAPH_CONSTANT_DATA, 4, "constant_data", &v);
  if (xp_fb_failed(fb)) return fb->status;
  if (v.count && !xp_fb_charge(fb, (uint64_t)v.count * 4, "", "constant_data")) return fb->status;
  if (v.count) {
    xpack_et_xnn_constant_entry* e = xp_arena_array(&g->arena, v.count, sizeof *e);
    if (!e) return xp_fb_fail(fb, XPACK_ERR_NOMEM, "", "constant_data", "out of memory");
    g->pub.constant_entries = e;
    g->pub.constant_entry_count = v.count;
    for (uint32_t i = 0; i < v.count && !xp_fb_failed(fb); i++) {
      xp_fb_table t;
      xp_fb_vec_table(&v, i, &t);
      e[i].offset = xp_fb_u64(&t, CDO_OFFSET, 0, "offset");
      e[i].size = xp_fb_u64(&t, CDO_SIZE, 0, "size");
      uint32_t len = 0;
      e[i].named_key = xp_fb_str(&t, CDO_NAMED_KEY, "named_key", &len);
      e[i].named_key_len = len;
      /* Each named key is looked up, compared and copied into an identity: charged like the program's keys. */
      if (e[i].named_key) xp_fb_charge(fb, len, t.path, "named_key");
    }
  }
  xp_fb_vec lb;
  xp_fb_vector(root, GRAPH_CONSTANT_BUFFER, 4, "constant_buffer", &lb);
  if (xp_fb_failed(fb) || lb.count == 0) return fb->status;
  if (!xp_fb_charge(fb, (uint64_t)lb.count * 4, "", "constant_buffer")) return fb->status;
  g->legacy_data = xp_arena_array(&g->arena, lb.count, sizeof *g->legacy_data);
  g->legacy_size = xp_arena_array(&g->arena, lb.count, sizeof *g->legacy_size);
  if (!g->legacy_data || !g->legacy_size) return xp_fb_fail(fb, XPACK_ERR_NOMEM, "", "constant_buffer", "out of memory");
  g->pub.legacy_constant_buffer_count = lb.count;
  for (uint32_t i = 0; i < lb.count && !xp_fb_failed(fb); i++) {
    xp_fb_table t;
    xp_fb_vec bytes;
    xp_fb_vec_table(&lb, i, &t);
    xp_fb_vector(&t, BUFFER_STORAGE, 1, "storage", &bytes);
    g->legacy_data[i] = xp_fb_vec_bytes(&bytes);
    g->legacy_size[i] = bytes.count;
  }
  return fb->status;
}

static int compare_slots(const void* a, const void* b) {
  const xp_id_slot* x = a;
  const xp_id_slot* y = b;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  return (x->value_index > y->value_index) - (x->value_index < y->value_index);
}

/* Builds the id_out index and checks that every id the graph mentions names exactly one value. */
static xpack_status index_and_check_ids(xp_xnn_graph* g, xp_fb* fb) {
  size_t n = g->pub.value_count;
  if (n) {
    g->ids = xp_arena_array(&g->arena, n, sizeof *g->ids);
    if (!g->ids) return xp_fb_fail(fb, XPACK_ERR_NOMEM, "", "xvalues", "out of memory");
    for (size_t i = 0; i < n; i++) {
      g->ids[i].id = g->pub.values[i].id_out;
      g->ids[i].value_index = (uint32_t)i;
    }
    qsort(g->ids, n, sizeof *g->ids, compare_slots);
    for (size_t i = 1; i < n; i++) {
      if (g->ids[i].id == g->ids[i - 1].id) {
        char path[64];
        snprintf(path, sizeof path, "xvalues[%u]", (unsigned)g->ids[i].value_index);
        return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, "id_out", "%u is also the id_out of xvalues[%u]",
                          (unsigned)g->ids[i].id, (unsigned)g->ids[i - 1].value_index);
      }
    }
  }
  const xpack_et_u32_array* ext[2] = {&g->pub.input_ids, &g->pub.output_ids};
  const char* ext_name[2] = {"input_ids", "output_ids"};
  for (int k = 0; k < 2; k++) {
    for (uint32_t i = 0; i < ext[k]->count; i++) {
      if (!xpack_et_xnn_graph_find_value(&g->pub, ext[k]->data[i])) {
        char path[64];
        snprintf(path, sizeof path, "%s[%u]", ext_name[k], (unsigned)i);
        return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, NULL, "%u is not the id_out of any xvalue",
                          (unsigned)ext[k]->data[i]);
      }
    }
  }
  /* XNNPACK makes room for num_externs values when the subgraph is created, before any is defined: a count of
   * 2,000,000 in a 7 KB program cost a pack 690 MB and 6 s. Each external id names one value of the graph. */
  if (g->pub.num_externs > n) {
    return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, "", "num_externs",
                      "%u is more than the graph's %zu xvalues (expected at most one external id per value)",
                      (unsigned)g->pub.num_externs, n);
  }
  for (size_t i = 0; i < g->pub.node_count; i++) {
    const xpack_et_xnn_node* node = &g->pub.nodes[i];
    size_t count = 0;
    const xpack_et_xnn_field* f = xpack_et_xnn_layout_fields(node->layout, &count);
    /* Concatenations only use as many inputs as their arity; the rest are unused slots. */
    unsigned arity = node->type == XPACK_ET_XNN_CONCATENATE2   ? 2
                     : node->type == XPACK_ET_XNN_CONCATENATE3 ? 3
                     : node->type == XPACK_ET_XNN_CONCATENATE4 ? 4
                                                               : 5;
    for (size_t k = 0; k < count; k++) {
      if (f[k].kind != XPACK_ET_XNN_FIELD_ID) continue;
      uint32_t id;
      memcpy(&id, (const unsigned char*)node + f[k].offset, sizeof id);
      if (id == XPACK_ET_XNN_INVALID_ID) continue;
      if (node->layout == XPACK_ET_XNN_LAYOUT_CONCATENATE && strncmp(f[k].name, "input", 5) == 0 &&
          (unsigned)(f[k].name[5] - '0') > arity) {
        continue;
      }
      if (!xpack_et_xnn_graph_find_value(&g->pub, id)) {
        char path[96];
        snprintf(path, sizeof path, "xnodes[%zu] (%s)", i, node->type_name);
        return xp_fb_fail(fb, XPACK_ERR_BAD_INPUT, path, f[k].name, "%u is not the id_out of any xvalue",
                          (unsigned)id);
      }
    }
  }
  return XPACK_OK;
}

/* The XH00 header, or the legacy bare flatbuffer. */
static xpack_status locate_regions(xp_xnn_graph* g, const uint8_t* b, size_t size, xpack_error* err) {
  const char* name = g->pub.name;
  if (size >= 8 && memcmp(b + 4, "XH00", 4) == 0) {
    if (size < XH00_MIN_LENGTH) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: %zu-byte blob is too short for its XH00 header (30 bytes)", name,
                     size);
    }
    uint16_t len = xp_le16(b + 8);
    uint32_t fb_off = xp_le32(b + 10), fb_size = xp_le32(b + 14), c_off = xp_le32(b + 18);
    uint64_t c_size = xp_le64(b + 22);
    if (len < XH00_MIN_LENGTH) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: XH00 header length %u; expected at least %d", name,
                     (unsigned)len, XH00_MIN_LENGTH);
    }
    if ((uint64_t)fb_off + fb_size > size || fb_off < len) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT,
                     "%s: XH00 flatbuffer [%u, +%u) is not inside the %zu-byte blob after its %u-byte header", name,
                     (unsigned)fb_off, (unsigned)fb_size, size, (unsigned)len);
    }
    if ((uint64_t)c_off < (uint64_t)fb_off + fb_size || c_off > size || c_size > size - c_off) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT,
                     "%s: XH00 constant data [%u, +%llu) must follow the flatbuffer (ends at %llu) inside the "
                     "%zu-byte blob",
                        name, (unsigned)c_off, (unsigned long long)c_size, (unsigned long long)fb_off + fb_size, size);
    }
    g->pub.has_header = true;
    g->pub.flatbuffer = b + fb_off;
    g->pub.flatbuffer_size = fb_size;
    g->pub.constant_data = b + c_off;
    g->pub.constant_data_size = c_size;
  } else {
    g->pub.flatbuffer = b;
    g->pub.flatbuffer_size = size;
  }
  const uint8_t* f = g->pub.flatbuffer;
  if (g->pub.flatbuffer_size < 8 || (memcmp(f + 4, "XN01", 4) != 0 && memcmp(f + 4, "XN00", 4) != 0)) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: not an XNNPACK graph: expected identifier \"XN01\" or \"XN00\" at bytes 4..8 of the %s",
                   name, g->pub.has_header ? "flatbuffer the XH00 header points to" : "blob (no XH00 header)");
  }
  memcpy(g->pub.identifier, f + 4, 4);
  g->pub.identifier[4] = 0;
  return XPACK_OK;
}

static xpack_status parse_graph(xp_xnn_graph* g, const uint8_t* blob, size_t size, xpack_error* err) {
  xpack_status st = locate_regions(g, blob, size, err);
  if (st != XPACK_OK) return st;
  xp_fb fb;
  xp_fb_init(&fb, g->pub.flatbuffer, g->pub.flatbuffer_size, g->pub.name, err);
  xp_fb_table root;
  if (!xp_fb_root(&fb, &root)) return fb.status;
  g->pub.version = xp_fb_str(&root, GRAPH_VERSION, "version", NULL);
  g->pub.num_externs = xp_fb_u32(&root, GRAPH_NUM_EXTERNS, 0, "num_externs");
  xp_fb_vec ins, outs;
  xp_fb_vector(&root, GRAPH_INPUT_IDS, 4, "input_ids", &ins);
  xp_fb_vector(&root, GRAPH_OUTPUT_IDS, 4, "output_ids", &outs);
  if (xp_fb_failed(&fb)) return fb.status;
  if (!copy_u32s(g, &fb, &ins, &g->pub.input_ids) || !copy_u32s(g, &fb, &outs, &g->pub.output_ids)) return fb.status;
  if ((st = read_values(g, &fb, &root)) != XPACK_OK) return st;
  if ((st = read_nodes(g, &fb, &root)) != XPACK_OK) return st;
  if ((st = read_constant_tables(g, &fb, &root)) != XPACK_OK) return st;
  if ((st = index_and_check_ids(g, &fb)) != XPACK_OK) return st;
  if (!xp_xnn_graph_index_uses(g)) return xp_fb_fail(&fb, XPACK_ERR_NOMEM, "", "xvalues", "out of memory");
  return XPACK_OK;
}

xpack_status xpack_et_xnn_graph_parse(const void* blob, size_t size, const char* name, xpack_et_xnn_graph** out,
                                      xpack_error* err) {
  if (out != NULL) *out = NULL; /* on every failure, a caller error included */
  if (!out || (!blob && size)) return xp_fail(err, XPACK_ERR_ARG, "xpack_et_xnn_graph_parse: NULL blob or out");
  xp_xnn_graph* g = calloc(1, sizeof *g);
  char* owned = g ? xp_et_strdup(name ? name : "(XNNPACK blob)") : NULL;
  if (!owned) {
    free(g);
    return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
  }
  g->pub.name = owned;
  pthread_mutex_init(&g->suffix_lock, NULL);
  xpack_status st = parse_graph(g, blob, size, err);
  if (st != XPACK_OK) {
    xpack_et_xnn_graph_free(&g->pub);
    return st;
  }
  *out = &g->pub;
  return XPACK_OK;
}

xpack_status xpack_et_xnn_graph_open(const xpack_et_program* program, size_t method, size_t delegate,
                                     xpack_et_xnn_graph** out, xpack_error* err) {
  if (out != NULL) *out = NULL; /* on every failure, a caller error included */
  if (!program || !out) return xp_fail(err, XPACK_ERR_ARG, "xpack_et_xnn_graph_open: NULL program or out");
  const xpack_et_program_info* info = xpack_et_program_get_info(program);
  if (method >= info->method_count || delegate >= info->methods[method].delegate_count) {
    return xp_fail(err, XPACK_ERR_ARG, "%s: no delegate %zu in method %zu", info->name, delegate, method);
  }
  const xpack_et_delegate* d = &info->methods[method].delegates[delegate];
  if (!d->is_xnnpack) {
    return xp_fail(err, XPACK_ERR_UNSUPPORTED, "%s: execution_plan[%zu].delegates[%zu] is a \"%s\" delegate, not XNNPACK",
                   info->name, method, delegate, d->backend_id);
  }
  char name[512];
  snprintf(name, sizeof name, "%s: execution_plan[%zu].delegates[%zu]", info->name, method, delegate);
  return xpack_et_xnn_graph_parse(d->data, d->size, name, out, err);
}

void xpack_et_xnn_graph_free(xpack_et_xnn_graph* graph) {
  if (!graph) return;
  xp_xnn_graph* g = (xp_xnn_graph*)graph;
  xp_arena_free(&g->arena);
  pthread_mutex_destroy(&g->suffix_lock);
  free((void*)g->pub.name);
  free(g);
}

const xpack_et_xnn_value* xpack_et_xnn_graph_find_value(const xpack_et_xnn_graph* graph, uint32_t id) {
  if (!graph) return NULL;
  const xp_xnn_graph* g = xp_xnn_graph_impl(graph);
  if (!g->ids) return NULL;
  size_t lo = 0, hi = graph->value_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (g->ids[mid].id < id) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < graph->value_count && g->ids[lo].id == id) return &graph->values[g->ids[lo].value_index];
  return NULL;
}
