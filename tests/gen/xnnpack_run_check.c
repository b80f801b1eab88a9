/* xnnpack_run_check: defines every XNNPACK delegate of a generated .pte in XNNPACK the way ExecuTorch's
 * XNNCompiler does (independently of libpack's replay, as a second opinion), then creates, reshapes,
 * sets up and invokes a runtime with zeroed inputs. Proves the generator's graphs are ones XNNPACK
 * accepts and packs. Only the node and value kinds the generator writes are handled.
 *   xnnpack_run_check MODEL.pte [WEIGHTS.ptd]     exit 0 = every delegate ran */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>
#include "xpack_executorch.h"

static const xpack_et_named_sources* S;
static enum xnn_datatype dt(int d) {
  switch (d) { case 1: return xnn_datatype_fp32; case 2: return xnn_datatype_fp16; case 6: return xnn_datatype_qcint8;
    case 8: return xnn_datatype_qcint4; case 9: return xnn_datatype_qdint8; case 10: return xnn_datatype_qbint4; }
  return xnn_datatype_invalid;
}
static const void* cdata(const xpack_et_xnn_graph* g, uint32_t idx) {
  if (!idx) return NULL;
  xpack_et_constant c; xpack_error e;
  if (xpack_et_xnn_resolve_constant(g, idx, S, &c, &e)) { printf("resolve %u: %s\n", idx, e.message); exit(3); }
  return c.data;
}
int main(int argc, char** argv) {
  xpack_error err = {0};
  xpack_et_program* prog;
  xnn_initialize(NULL);
  if (xpack_et_program_open(argv[1], &prog, &err)) { printf("open: %s\n", err.message); return 1; }
  xpack_et_ptd* ptd = NULL;
  if (argc > 2 && xpack_et_ptd_open(argv[2], &ptd, &err)) {
    printf("ptd: %s\n", err.message);
    xpack_et_program_close(prog);
    return 1;
  }
  const xpack_et_ptd* ptds[1] = {ptd};
  xpack_et_named_sources src = {prog, ptds, ptd ? 1 : 0};
  S = &src;
  const xpack_et_program_info* info = xpack_et_program_get_info(prog);
  int bad = 0;
  for (size_t m = 0; m < info->method_count; m++)
    for (size_t d = 0; d < info->methods[m].delegate_count; d++) {
      xpack_et_xnn_graph* g;
      if (xpack_et_xnn_graph_open(prog, m, d, &g, &err)) { printf("graph: %s\n", err.message); bad = 1; continue; }
      if (g->value_count > 4096) {
        printf("graph too large for this check\n");
        xpack_et_xnn_graph_free(g);
        bad = 1;
        continue;
      }
      xnn_subgraph_t sg;
      uint32_t next = 0;
      for (size_t i = 0; i < g->value_count; i++) if (g->values[i].flags) next++;
      xnn_create_subgraph(next, 0, &sg);
      uint32_t map[4096];
      enum xnn_status st = xnn_status_success;
      for (size_t i = 0; i < g->value_count && !st; i++) {
        const xpack_et_xnn_value* v = &g->values[i];
        size_t dims[8]; for (uint32_t k = 0; k < v->num_dims; k++) dims[k] = v->dims[k];
        uint32_t ext = v->flags ? v->external_id : XNN_INVALID_VALUE_ID, fl = v->flags, id;
        const void* data = cdata(g, v->constant_buffer_idx);
        switch (v->quant.kind) {
          case XPACK_ET_XNN_QUANT_NONE: st = xnn_define_tensor_value(sg, dt(v->datatype), v->num_dims, dims, data, ext, fl, &id); break;
          case XPACK_ET_XNN_QUANT_PER_CHANNEL:
            st = xnn_define_channelwise_quantized_tensor_value_v2(sg, dt(v->datatype), v->datatype == 8 ? 8 : 0,
                   cdata(g, v->quant.scale_buffer_idx), v->num_dims, v->quant.channel_dim, dims, data, ext, fl, &id); break;
          case XPACK_ET_XNN_QUANT_PER_CHANNEL_GROUP:
            st = xnn_define_blockwise_quantized_tensor_value(sg, dt(v->datatype), 8, cdata(g, v->quant.scale_buffer_idx),
                   v->num_dims, v->quant.channel_dim, v->quant.group_size, dims, data, ext, fl, &id); break;
          case XPACK_ET_XNN_QUANT_PER_TOKEN_DYNAMIC:
            st = xnn_define_dynamically_quantized_tensor_value(sg, dt(v->datatype), v->num_dims, v->quant.num_nonbatch_dims, dims, ext, fl, &id); break;
          default: st = 99;
        }
        map[v->id_out] = id;
        if (st) printf("value %zu define status %d\n", i, st);
      }
#define M(x) ((x) == XNN_INVALID_VALUE_ID ? XNN_INVALID_VALUE_ID : map[x])
      for (size_t i = 0; i < g->node_count && !st; i++) {
        const xpack_et_xnn_node* n = &g->nodes[i];
        float lo = n->has_output_min_max ? n->output_min : -INFINITY, hi = n->has_output_min_max ? n->output_max : INFINITY;
        size_t v6[8];
        switch (n->type) {
          case 1: st = xnn_define_add2(sg, lo, hi, M(n->u.binary.input1_id), M(n->u.binary.input2_id), M(n->u.binary.output_id), 0); break;
          case 15: st = xnn_define_multiply2(sg, lo, hi, M(n->u.binary.input1_id), M(n->u.binary.input2_id), M(n->u.binary.output_id), 0); break;
          case 37: st = xnn_define_batch_matrix_multiply(sg, M(n->u.binary.input1_id), M(n->u.binary.input2_id), M(n->u.binary.output_id), 0); break;
          case 2: st = xnn_define_fully_connected(sg, lo, hi, M(n->u.fully_connected.input1_id), M(n->u.fully_connected.filter_id),
                      M(n->u.fully_connected.bias_id), M(n->u.fully_connected.output_id), n->u.fully_connected.flags); break;
          case 4: st = xnn_define_sigmoid(sg, M(n->u.unary.input_id), M(n->u.unary.output_id), 0); break;
          case 18: st = xnn_define_convert(sg, M(n->u.unary.input_id), M(n->u.unary.output_id), 0); break;
          case 19: st = xnn_define_global_average_pooling_2d(sg, lo, hi, M(n->u.unary.input_id), M(n->u.unary.output_id), n->u.unary.flags); break;
          case 5: for (uint32_t k = 0; k < n->u.transpose.num_dims; k++) v6[k] = n->u.transpose.perm.data[k];
            st = xnn_define_static_transpose(sg, n->u.transpose.num_dims, v6, M(n->u.transpose.input_id), M(n->u.transpose.output_id), 0); break;
          case 20: for (uint32_t k = 0; k < n->u.reshape.num_dims; k++) v6[k] = n->u.reshape.new_shape.data[k];
            st = xnn_define_static_reshape(sg, n->u.reshape.num_dims, v6, M(n->u.reshape.input_id), M(n->u.reshape.output_id), 0); break;
          case 7: case 13: case 39: {
            __typeof__(n->u.conv) c = n->u.conv;
            if (n->type == 7) st = xnn_define_convolution_2d(sg, c.padding_top, c.padding_right, c.padding_bottom, c.padding_left, c.kernel_height, c.kernel_width,
                c.subsampling_height, c.subsampling_width, c.dilation_height, c.dilation_width, c.groups, c.group_input_channels, c.group_output_channels,
                lo, hi, M(c.input1_id), M(c.filter_id), M(c.bias_id), M(c.output_id), c.flags);
            else if (n->type == 13) st = xnn_define_depthwise_convolution_2d(sg, c.padding_top, c.padding_right, c.padding_bottom, c.padding_left, c.kernel_height, c.kernel_width,
                c.subsampling_height, c.subsampling_width, c.dilation_height, c.dilation_width, c.group_output_channels / c.group_input_channels, c.groups,
                lo, hi, M(c.input1_id), M(c.filter_id), M(c.bias_id), M(c.output_id), c.flags);
            else st = xnn_define_deconvolution_2d(sg, c.padding_top, c.padding_right, c.padding_bottom, c.padding_left, c.adjustment_height, c.adjustment_width,
                c.kernel_height, c.kernel_width, c.subsampling_height, c.subsampling_width, c.dilation_height, c.dilation_width, c.groups,
                c.group_input_channels, c.group_output_channels, lo, hi, M(c.input1_id), M(c.filter_id), M(c.bias_id), M(c.output_id), c.flags);
            break; }
          default: st = 98;
        }
        if (st) printf("node %zu (%s) define status %d\n", i, n->type_name, st);
      }
      xnn_runtime_t rt = NULL;
      if (!st) st = xnn_create_runtime_v3(sg, NULL, NULL, 0, &rt);
      struct xnn_external_value ext[16]; void* bufs[16]; int ne = 0;
      for (size_t i = 0; i < g->value_count && !st; i++) {
        const xpack_et_xnn_value* v = &g->values[i];
        if (!v->flags) continue;
        if (ne == 16) { st = xnn_status_invalid_parameter; break; }
        size_t n = v->datatype == 2 ? 2 : 4; for (uint32_t k = 0; k < v->num_dims; k++) n *= v->dims[k];
        bufs[ne] = calloc(1, n + XNN_EXTRA_BYTES); ext[ne].id = v->external_id; ext[ne].data = bufs[ne]; ne++;
      }
      if (!st) st = xnn_reshape_runtime(rt);
      if (!st) st = xnn_setup_runtime_v2(rt, ne, ext);
      if (!st) st = xnn_invoke_runtime(rt);
      printf("%s %s delegate %zu: %zu values %zu nodes -> %s\n", argv[1], info->methods[m].name, d, g->value_count, g->node_count, st ? "FAILED" : "ran");
      if (st) bad = 1;
      if (rt) xnn_delete_runtime(rt);
      xnn_delete_subgraph(sg);
      for (int i = 0; i < ne; i++) free(bufs[i]);
      xpack_et_xnn_graph_free(g);
    }
  xpack_et_ptd_close(ptd);
  xpack_et_program_close(prog);
  return bad;
}
