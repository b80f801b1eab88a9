/* et_dump: prints what the ExecuTorch readers see in .pte / .ptd files (a test and debugging aid).
 *   et_dump [-v] [--nodes] model.pte [weights.ptd ...]
 *   et_dump weights.ptd
 *   et_dump --blobs DIR model.pte     writes each XNNPACK delegate blob to DIR (fuzz seeds)
 * Exit: 0 ok, 1 the readers returned an error (printed as "error: <status>: <message>"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xpack_executorch.h"

static bool ends_with(const char* s, const char* suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int fail(const xpack_error* err) {
  printf("error: %s: %s\n", xpack_status_name(err->status), err->message);
  return 1;
}

static void print_node(const xpack_et_xnn_node* n) {
  printf("      node %u %s(%u)", (unsigned)n->index, n->type_name, (unsigned)n->type);
  size_t count = 0;
  const xpack_et_xnn_field* f = xpack_et_xnn_layout_fields(n->layout, &count);
  for (size_t i = 0; i < count; i++) {
    const unsigned char* p = (const unsigned char*)n + f[i].offset;
    if (f[i].kind == XPACK_ET_XNN_FIELD_F32) {
      float v;
      memcpy(&v, p, sizeof v);
      printf(" %s=%g", f[i].name, v);
    } else if (f[i].kind == XPACK_ET_XNN_FIELD_U32_ARRAY) {
      xpack_et_u32_array a;
      memcpy(&a, p, sizeof a);
      printf(" %s=[", f[i].name);
      for (uint32_t k = 0; k < a.count; k++) printf("%s%u", k ? "," : "", (unsigned)a.data[k]);
      printf("]");
    } else {
      uint32_t v;
      memcpy(&v, p, sizeof v);
      if (v == XPACK_ET_XNN_INVALID_ID && f[i].kind == XPACK_ET_XNN_FIELD_ID) {
        printf(" %s=none", f[i].name);
      } else {
        printf(" %s=%u", f[i].name, (unsigned)v);
      }
    }
  }
  if (n->has_output_min_max) printf(" min=%g max=%g", n->output_min, n->output_max);
  printf("\n");
}

static void print_graphs(const xpack_et_program* p) {
  const xpack_et_program_info* info = xpack_et_program_get_info(p);
  for (size_t m = 0; m < info->method_count; m++) {
    for (size_t d = 0; d < info->methods[m].delegate_count; d++) {
      if (!info->methods[m].delegates[d].is_xnnpack) continue;
      xpack_et_xnn_graph* g;
      xpack_error err;
      if (xpack_et_xnn_graph_open(p, m, d, &g, &err) != XPACK_OK) {
        fail(&err);
        continue;
      }
      printf("    graph %s: version %s, externs %u\n", g->name, g->version ? g->version : "-", (unsigned)g->num_externs);
      for (size_t i = 0; i < g->value_count; i++) {
        const xpack_et_xnn_value* v = &g->values[i];
        printf("      value %u id_out=%u %s dims=[", (unsigned)v->index, (unsigned)v->id_out, v->datatype_name);
        for (uint32_t k = 0; k < v->num_dims; k++) printf("%s%u", k ? "," : "", (unsigned)v->dims[k]);
        printf("] const=%u ext=%u flags=%u quant=%d", (unsigned)v->constant_buffer_idx, (unsigned)v->external_id,
               (unsigned)v->flags, (int)v->quant.kind);
        if (v->quant.kind == XPACK_ET_XNN_QUANT_PER_TENSOR) printf(" scale=%g zp=%d", v->quant.scale, v->quant.zero_point);
        if (v->quant.kind == XPACK_ET_XNN_QUANT_PER_CHANNEL) {
          printf(" scales=%u num_scales=%u channel_dim=%d scale_buffer_idx=%u", (unsigned)v->quant.scale_count,
                 (unsigned)v->quant.num_scales, v->quant.channel_dim, (unsigned)v->quant.scale_buffer_idx);
        }
        if (v->dq_datatype) printf(" dq=%d", v->dq_datatype);
        printf("\n");
      }
      for (size_t i = 0; i < g->node_count; i++) print_node(&g->nodes[i]);
      for (size_t i = 0; i < g->constant_entry_count; i++) {
        const xpack_et_xnn_constant_entry* e = &g->constant_entries[i];
        printf("      constant_data[%zu] offset=%llu size=%llu key=%s\n", i, (unsigned long long)e->offset,
               (unsigned long long)e->size, e->named_key ? e->named_key : "-");
      }
      xpack_et_xnn_graph_free(g);
    }
  }
}

static int write_blobs(const xpack_et_program* p, const char* dir) {
  const xpack_et_program_info* info = xpack_et_program_get_info(p);
  const char* base = strrchr(info->name, '/');
  base = base ? base + 1 : info->name;
  for (size_t m = 0; m < info->method_count; m++) {
    for (size_t d = 0; d < info->methods[m].delegate_count; d++) {
      const xpack_et_delegate* del = &info->methods[m].delegates[d];
      if (!del->is_xnnpack) continue;
      char path[1024];
      snprintf(path, sizeof path, "%s/%s-m%zu-d%zu.blob", dir, base, m, d);
      FILE* f = fopen(path, "wb");
      if (!f || fwrite(del->data, 1, del->size, f) != del->size) {
        if (f) fclose(f);
        fprintf(stderr, "cannot write %s\n", path);
        return 1;
      }
      fclose(f);
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  bool verbose = false, nodes = false;
  const char* blobs_dir = NULL;
  int first = 1;
  for (; first < argc && argv[first][0] == '-'; first++) {
    if (strcmp(argv[first], "-v") == 0) verbose = true;
    if (strcmp(argv[first], "--nodes") == 0) nodes = verbose = true;
    if (strcmp(argv[first], "--blobs") == 0 && first + 1 < argc) blobs_dir = argv[++first];
  }
  if (first >= argc) {
    fprintf(stderr, "usage: et_dump [-v] [--nodes] model.pte [weights.ptd ...] | weights.ptd\n");
    return 2;
  }
  xpack_error err;
  if (ends_with(argv[first], ".ptd")) {
    xpack_et_ptd* ptd;
    if (xpack_et_ptd_open(argv[first], &ptd, &err) != XPACK_OK) return fail(&err);
    const xpack_et_ptd_info* info = xpack_et_ptd_get_info(ptd);
    printf("%s: layout %s, version %u, %zu segments, %zu entries\n", info->name,
           info->layout == XPACK_ET_PTD_NAMED_DATA ? "named_data" : "tensors", (unsigned)info->version,
           info->segment_count, info->entry_count);
    for (size_t i = 0; i < info->entry_count; i++) {
      printf("  %s: segment %u, %zu bytes\n", info->entries[i].key, (unsigned)info->entries[i].segment_index,
             info->entries[i].size);
    }
    xpack_et_ptd_close(ptd);
    return 0;
  }
  xpack_et_program* p;
  if (xpack_et_program_open(argv[first], &p, &err) != XPACK_OK) return fail(&err);
  if (blobs_dir) {
    int rc = write_blobs(p, blobs_dir);
    xpack_et_program_close(p);
    return rc;
  }
  int nptd = argc - first - 1;
  xpack_et_ptd** ptds = calloc(nptd ? (size_t)nptd : 1, sizeof *ptds);
  int rc = 0;
  for (int i = 0; i < nptd && rc == 0; i++) {
    if (xpack_et_ptd_open(argv[first + 1 + i], &ptds[i], &err) != XPACK_OK) rc = fail(&err);
  }
  if (rc == 0) {
    xpack_et_named_sources src = {p, (const xpack_et_ptd* const*)ptds, (size_t)nptd};
    xpack_et_summary* s;
    if (xpack_et_summarize(p, &src, &s, &err) != XPACK_OK) {
      rc = fail(&err);
    } else {
      if (xpack_et_summary_print(s, p, verbose, stdout, &err) != XPACK_OK) rc = fail(&err);
      xpack_et_summary_free(s);
    }
    if (nodes) print_graphs(p);
  }
  for (int i = 0; i < nptd; i++) xpack_et_ptd_close(ptds[i]);
  free(ptds);
  xpack_et_program_close(p);
  return rc;
}
