/* Every real file in the test data folder parses as MANIFEST.md describes it.
 * usage: et_real_test <real-testdata-dir>   (exit 77 when the folder is absent) */
#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>

#include "et_test_util.h"
#include "xpack_executorch.h"

typedef struct expect {
  const char* file;
  size_t delegates;      /* all delegates */
  size_t xnnpack;        /* XNNPACK delegates */
  int eh00;              /* extended header length (0 = none) */
  const char* node_type; /* a node type that must appear (NULL = none) */
  unsigned node_count;   /* how many of it over the whole program (0 = at least one) */
  int const_source;      /* every constant comes from here (-1 = do not check) */
  size_t constants;      /* constants over all XNNPACK delegates (SIZE_MAX = do not check) */
} expect;

static const expect EXPECTED[] = {
    {"add.pte", 1, 1, 32, "Add", 1, -1, 0},
    {"clamp.pte", 1, 1, 32, "Clamp", 1, -1, 0},
    {"conv.pte", 1, 1, 32, "Conv2d", 1, XPACK_ET_CONSTANT_PTE_NAMED_DATA, 2},
    {"dwconv_inblob_2024.pte", 1, 1, 24, "DepthwiseConv2d", 5, XPACK_ET_CONSTANT_BLOB, 5},
    {"dynamic_mul.pte", 1, 1, 32, "Multiply", 1, -1, SIZE_MAX},
    {"img_dec_small_q8.pte", 12, 12, 24, "Convert", 0, XPACK_ET_CONSTANT_PTE_NAMED_DATA, SIZE_MAX},
    {"img_enc_fp32.pte", 7, 7, 24, "ReciprocalSquareRoot", 0, XPACK_ET_CONSTANT_PTE_NAMED_DATA, SIZE_MAX},
    {"legacy_constant_buffer.pte", 0, 0, 0, NULL, 0, -1, 0},
    {"linear129.pte", 1, 1, 32, "FullyConnected", 1, XPACK_ET_CONSTANT_PTE_NAMED_DATA, 2},
    {"openvino_tiny.pte", 1, 0, 32, NULL, 0, -1, 0},
    {"person_detect_fp32.pte", 4, 4, 32, "FullyConnected", 4, XPACK_ET_CONSTANT_PTE_NAMED_DATA, 8},
    {"person_detect_int8.pte", 7, 7, 32, "FullyConnected", 4, XPACK_ET_CONSTANT_PTE_NAMED_DATA, SIZE_MAX},
    {"portable_linear.pte", 0, 0, 0, NULL, 0, -1, 0},
    {"portable_multi_method.pte", 0, 0, 32, NULL, 0, -1, 0},
    {"portable_xor.pte", 0, 0, 24, NULL, 0, -1, 0},
    {"qint8_linear.pte", 1, 1, 32, "FullyConnected", 1, XPACK_ET_CONSTANT_PTE_NAMED_DATA, 2},
    {"small_cnn.pte", 2, 2, 24, "DepthwiseConv2d", 1, XPACK_ET_CONSTANT_PTE_NAMED_DATA, 6},
    {"stress_mlp.pte", 2, 2, 32, "FullyConnected", 8, XPACK_ET_CONSTANT_PTE_NAMED_DATA, 16},
};

static const expect* find_expectation(const char* name) {
  for (size_t i = 0; i < sizeof EXPECTED / sizeof EXPECTED[0]; i++) {
    if (strcmp(EXPECTED[i].file, name) == 0) return &EXPECTED[i];
  }
  return NULL;
}

static int node_type_code(const char* name) {
  for (int t = 1; t <= XPACK_ET_XNN_NODE_TYPE_MAX; t++) {
    if (strcmp(xpack_et_xnn_node_type_name(t), name) == 0) return t;
  }
  return 0;
}

static bool is_lower_hex(const char* s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i])) return false;
  }
  return true;
}

/* Opens, summarizes (which parses every XNNPACK graph and resolves every constant) and checks. */
static void check_program(const char* dir, const char* name) {
  char* path = et_path(dir, name);
  xpack_error err = {0};
  xpack_et_program* p = NULL;
  xpack_status st = xpack_et_program_open(path, &p, &err);
  if (strncmp(name, "bad_", 4) == 0) {
    EXPECT_MSG(st == XPACK_ERR_BAD_INPUT, "%s: expected bad_input, got %s", name, xpack_status_name(st));
    EXPECT_MSG(strstr(err.message, name) != NULL, "%s: message does not name the file: %s", name, err.message);
    EXPECT_MSG(strstr(err.message, "ET12") != NULL, "%s: message does not say what was expected: %s", name, err.message);
    printf("ok %s rejected: %s\n", name, err.message);
    free(path);
    return;
  }
  EXPECT_MSG(st == XPACK_OK, "%s: open failed: %s", name, err.message);
  if (st != XPACK_OK) {
    free(path);
    return;
  }
  const xpack_et_program_info* info = xpack_et_program_get_info(p);
  xpack_et_summary* s = NULL;
  st = xpack_et_summarize(p, NULL, &s, &err);
  EXPECT_MSG(st == XPACK_OK, "%s: summarize failed: %s", name, err.message);
  const expect* e = find_expectation(name);
  EXPECT_MSG(e != NULL, "%s: a real file without an expectation: add it to EXPECTED", name);
  if (s && e) {
    EXPECT_MSG(s->delegate_count == e->delegates, "%s: %zu delegates, expected %zu", name, s->delegate_count, e->delegates);
    EXPECT_MSG(s->xnnpack_delegate_count == e->xnnpack, "%s: %zu XNNPACK delegates, expected %zu", name,
          s->xnnpack_delegate_count, e->xnnpack);
    EXPECT_MSG(info->xnnpack_delegate_count == e->xnnpack, "%s: info says %zu XNNPACK delegates", name,
          info->xnnpack_delegate_count);
    EXPECT_MSG((int)info->extended_header_size == e->eh00, "%s: eh00 length %u, expected %d", name,
          (unsigned)info->extended_header_size, e->eh00);
    unsigned nodes_of_type = 0;
    size_t constants = 0;
    int type = e->node_type ? node_type_code(e->node_type) : 0;
    for (size_t i = 0; i < s->delegate_count; i++) {
      const xpack_et_delegate_summary* d = &s->delegates[i];
      if (type) nodes_of_type += d->node_type_counts[type];
      constants += d->constant_count;
      for (size_t k = 0; k < d->constant_count; k++) {
        const xpack_et_constant_summary* c = &d->constants[k];
        if (e->const_source >= 0) {
          EXPECT_MSG((int)c->source == e->const_source, "%s: constant %s from %s", name, c->identity,
                xpack_et_constant_source_name(c->source));
        }
        if (c->source == XPACK_ET_CONSTANT_PTE_NAMED_DATA) {
          /* Named XNNPACK keys are sha256 hex, scales prefixed with "scale_"; a weight's identity adds its
           * packing suffix ("|xnn:" and 32 hex digits, xpack_et_packing_suffix). */
          const char* key = c->identity;
          if (strncmp(key, "scale_", 6) == 0) key += 6;
          size_t key_len = strlen(key);
          if (key_len == 64 + 37 && strncmp(key + 64, "|xnn:", 5) == 0 && is_lower_hex(key + 69, 32)) key_len = 64;
          EXPECT_MSG(key_len == 64 && is_lower_hex(key, 64), "%s: named key is not sha256 hex: %s", name, c->identity);
        } else if (c->source == XPACK_ET_CONSTANT_BLOB) {
          EXPECT_MSG(strncmp(c->identity, "xpack:xxh3-128:", 15) == 0, "%s: in-blob identity %s", name, c->identity);
        }
      }
    }
    if (type) {
      if (e->node_count) {
        EXPECT_MSG(nodes_of_type == e->node_count, "%s: %u %s nodes, expected %u", name, nodes_of_type, e->node_type,
              e->node_count);
      } else {
        EXPECT_MSG(nodes_of_type > 0, "%s: no %s node", name, e->node_type);
      }
    }
    if (e->constants != SIZE_MAX) {
      EXPECT_MSG(constants == e->constants, "%s: %zu constants, expected %zu", name, constants, e->constants);
    }
  }
  printf("ok %s: %zu methods, %zu delegates (%zu XNNPACK)\n", name, info->method_count, s ? s->delegate_count : 0,
         s ? s->xnnpack_delegate_count : 0);
  xpack_et_summary_free(s);
  xpack_et_program_close(p);
  free(path);
}

static void check_ptd(const char* dir, const char* name) {
  char* path = et_path(dir, name);
  xpack_error err = {0};
  xpack_et_ptd* t = NULL;
  xpack_status st = xpack_et_ptd_open(path, &t, &err);
  EXPECT_MSG(st == XPACK_OK, "%s: %s", name, err.message);
  free(path);
  if (st != XPACK_OK) return;
  const xpack_et_ptd_info* info = xpack_et_ptd_get_info(t);
  if (strcmp(name, "orphan_xnnpack_weights.ptd") == 0) {
    EXPECT_MSG(info->layout == XPACK_ET_PTD_NAMED_DATA, "%s: layout %d", name, info->layout);
    EXPECT_MSG(info->entry_count == 6, "%s: %zu keys, expected 6", name, info->entry_count);
    for (size_t i = 0; i < info->entry_count; i++) {
      EXPECT_MSG(info->entries[i].key_len == 64 && is_lower_hex(info->entries[i].key, 64), "%s: key %s", name,
            info->entries[i].key);
    }
    const xpack_et_ptd_entry* hit = xpack_et_ptd_find(t, info->entries[2].key, info->entries[2].key_len);
    EXPECT_MSG(hit == &info->entries[2], "%s: lookup by key", name);
    EXPECT_MSG(info->entries[2].size == 4608, "%s: entry 2 has %zu bytes", name, info->entries[2].size);
  } else if (strcmp(name, "portable_linear_oldlayout.ptd") == 0) {
    EXPECT_MSG(info->layout == XPACK_ET_PTD_TENSORS, "%s: layout %d", name, info->layout);
    const xpack_et_ptd_entry* w = xpack_et_ptd_find(t, "linear.weight", 13);
    const xpack_et_ptd_entry* b = xpack_et_ptd_find(t, "linear.bias", 11);
    EXPECT_MSG(w && w->size == 36, "%s: linear.weight (3x3 float)", name);
    EXPECT_MSG(b && b->size == 12, "%s: linear.bias (3 float)", name);
    EXPECT_MSG(w && b && b->data == w->data + 48, "%s: bias at offset 48 of the segment", name);
    EXPECT_MSG(xpack_et_ptd_find(t, "linear.weigh", 12) == NULL, "%s: prefix must not match", name);
  } else if (strcmp(name, "portable_xor.ptd") == 0) {
    EXPECT_MSG(info->layout == XPACK_ET_PTD_NAMED_DATA, "%s: layout %d", name, info->layout);
    EXPECT_MSG(info->entry_count == 4, "%s: %zu entries", name, info->entry_count);
    const xpack_et_ptd_entry* w = xpack_et_ptd_find(t, "net.linear.weight", 17);
    EXPECT_MSG(w && w->size == 80, "%s: net.linear.weight", name);
  }
  printf("ok %s: %s layout, %zu entries\n", name, info->layout == XPACK_ET_PTD_NAMED_DATA ? "named_data" : "tensors",
         info->entry_count);
  xpack_et_ptd_close(t);
}

/* linear129.pte: 1 FullyConnected [129]->[64], weight and bias in named_data of the right size. */
static void check_linear129(const char* dir) {
  char* path = et_path(dir, "linear129.pte");
  xpack_error err;
  xpack_et_program* p;
  if (xpack_et_program_open(path, &p, &err) != XPACK_OK) {
    EXPECT_MSG(0, "linear129.pte: %s", err.message);
    free(path);
    return;
  }
  xpack_et_xnn_graph* g;
  EXPECT_MSG(xpack_et_xnn_graph_open(p, 0, 0, &g, &err) == XPACK_OK, "%s", err.message);
  EXPECT_MSG(g->node_count == 1 && g->nodes[0].type == XPACK_ET_XNN_FULLY_CONNECTED, "one FullyConnected");
  const xpack_et_xnn_node* fc = &g->nodes[0];
  const xpack_et_xnn_value* w = xpack_et_xnn_graph_find_value(g, fc->u.fully_connected.filter_id);
  const xpack_et_xnn_value* b = xpack_et_xnn_graph_find_value(g, fc->u.fully_connected.bias_id);
  const xpack_et_xnn_value* in = xpack_et_xnn_graph_find_value(g, fc->u.fully_connected.input1_id);
  EXPECT_MSG(w && w->num_dims == 2 && w->dims[0] == 64 && w->dims[1] == 129, "weight dims [64,129]");
  EXPECT_MSG(in && in->dims[0] == 129 && (in->flags & XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT), "external input [129]");
  EXPECT_MSG(g->num_externs == 2 && g->input_ids.count == 1 && g->output_ids.count == 1, "externs");
  xpack_et_named_sources src = {p, NULL, 0};
  xpack_et_constant c;
  EXPECT_MSG(w && xpack_et_xnn_resolve_constant(g, w->constant_buffer_idx, &src, &c, &err) == XPACK_OK, "%s", err.message);
  EXPECT_MSG(c.source == XPACK_ET_CONSTANT_PTE_NAMED_DATA && c.size == 64 * 129 * 4, "weight: %zu bytes from %s", c.size,
        xpack_et_constant_source_name(c.source));
  size_t file_size;
  const uint8_t* file = xpack_et_program_bytes(p, &file_size);
  EXPECT_MSG(c.data > file && c.data + c.size <= file + file_size, "weight points into the mapped file");
  EXPECT_MSG(c.named_key && c.named_key_len == 64, "weight has a sha256 key");
  EXPECT_MSG(b && xpack_et_xnn_resolve_constant(g, b->constant_buffer_idx, &src, &c, &err) == XPACK_OK, "%s", err.message);
  EXPECT_MSG(c.size == 64 * 4, "bias: %zu bytes", c.size);
  /* Without the program the named key cannot be found: a clear error, not a crash. */
  xpack_et_named_sources none = {NULL, NULL, 0};
  EXPECT_MSG(xpack_et_xnn_resolve_constant(g, w->constant_buffer_idx, &none, &c, &err) == XPACK_ERR_BAD_INPUT &&
             strstr(err.message, "missing .ptd") != NULL,
        "unresolvable key: %s", err.message);
  EXPECT_MSG(xpack_et_xnn_resolve_constant(g, 99, &src, &c, &err) == XPACK_ERR_BAD_INPUT, "index past constant_data");
  EXPECT_MSG(xpack_et_xnn_resolve_constant(g, 0, &src, &c, &err) == XPACK_OK && c.source == XPACK_ET_CONSTANT_NONE,
        "index 0 is not a constant");
  xpack_et_xnn_graph_free(g);
  /* The OpenVINO-only file has no XNNPACK graph to open. */
  xpack_et_program_close(p);
  free(path);
}

/* person_detect_int8.pte: qcint8 per-channel weights whose scales are a named constant. */
static void check_per_channel_scales(const char* dir) {
  char* path = et_path(dir, "person_detect_int8.pte");
  xpack_error err;
  xpack_et_program* p;
  if (xpack_et_program_open(path, &p, &err) != XPACK_OK) {
    EXPECT_MSG(0, "%s", err.message);
    free(path);
    return;
  }
  xpack_et_xnn_graph* g;
  EXPECT_MSG(xpack_et_xnn_graph_open(p, 0, 0, &g, &err) == XPACK_OK, "%s", err.message);
  xpack_et_named_sources src = {p, NULL, 0};
  int seen = 0;
  for (size_t i = 0; g && i < g->value_count; i++) {
    const xpack_et_xnn_value* v = &g->values[i];
    if (v->quant.kind != XPACK_ET_XNN_QUANT_PER_CHANNEL) continue;
    seen++;
    EXPECT_MSG(v->datatype == XPACK_ET_XNN_DT_QCINT8 || v->datatype == XPACK_ET_XNN_DT_QCINT32, "datatype %s",
          v->datatype_name);
    EXPECT_MSG(v->quant.scale_buffer_idx != 0 && v->quant.num_scales == v->dims[0], "scales in a constant, one per channel");
    xpack_et_constant c;
    EXPECT_MSG(xpack_et_xnn_resolve_constant(g, v->quant.scale_buffer_idx, &src, &c, &err) == XPACK_OK, "%s", err.message);
    EXPECT_MSG(c.size == (size_t)v->quant.num_scales * 4, "scale bytes %zu for %u scales", c.size,
          (unsigned)v->quant.num_scales);
  }
  EXPECT_MSG(seen == 2, "%d per-channel values (weight and bias)", seen);
  xpack_et_xnn_graph_free(g);
  /* Non-XNNPACK delegates are refused by graph_open with UNSUPPORTED. */
  xpack_et_program_close(p);
  free(path);
  path = et_path(dir, "openvino_tiny.pte");
  if (xpack_et_program_open(path, &p, &err) == XPACK_OK) {
    EXPECT_MSG(xpack_et_xnn_graph_open(p, 0, 0, &g, &err) == XPACK_ERR_UNSUPPORTED, "OpenVINO delegate is not XNNPACK");
    xpack_et_program_close(p);
  }
  free(path);
}

static void check_named_lookup(const char* dir) {
  char* path = et_path(dir, "portable_multi_method.pte");
  xpack_error err;
  xpack_et_program* p;
  if (xpack_et_program_open(path, &p, &err) == XPACK_OK) {
    const xpack_et_program_info* info = xpack_et_program_get_info(p);
    EXPECT_MSG(info->method_count == 2 && strcmp(info->methods[0].name, "double") == 0 &&
               strcmp(info->methods[1].name, "forward") == 0,
          "methods double, forward");
    xpack_et_program_close(p);
  }
  free(path);
  path = et_path(dir, "legacy_constant_buffer.pte");
  if (xpack_et_program_open(path, &p, &err) == XPACK_OK) {
    const uint8_t* d;
    size_t n;
    EXPECT_MSG(xpack_et_program_get_info(p)->legacy_constant_buffer_count == 3, "legacy constant_buffer");
    EXPECT_MSG(xpack_et_program_legacy_constant(p, 1, &d, &n, &err) == XPACK_OK && n > 0, "legacy constant 1");
    EXPECT_MSG(xpack_et_program_legacy_constant(p, 3, &d, &n, &err) == XPACK_ERR_ARG, "legacy constant 3 is out of range");
    xpack_et_program_close(p);
  }
  free(path);
}

/* Builds a one-entry .ptd (2025-06 layout) in memory: key -> bytes. Layout chosen by hand so every
 * offset points forward; returns the total size. */
static size_t build_ptd(uint8_t* b, size_t cap, const char* key, size_t key_len, const uint8_t* data, size_t size) {
  const size_t seg_base = 256;
  if (key_len != 64 || seg_base + size > cap) return 0;
  memset(b, 0, seg_base + size);
#define P16(at, v) (b[at] = (uint8_t)(v), b[(at) + 1] = (uint8_t)((v) >> 8))
#define P32(at, v) (P16(at, (v) & 0xffff), P16((at) + 2, ((v) >> 16) & 0xffff))
#define P64(at, v) (P32(at, (uint32_t)(v)), P32((at) + 4, (uint32_t)((uint64_t)(v) >> 32)))
  P32(0, 60); /* root table */
  memcpy(b + 4, "FT01FH01", 8);
  P32(12, 40);
  P64(16, 48);
  P64(24, 216 - 48);
  P64(32, seg_base);
  P64(40, size);
  P16(48, 10); P16(50, 12); P16(52, 0); P16(54, 4); P16(56, 8);  /* FlatTensor vtable */
  P32(60, 12); P32(64, 72 - 64); P32(68, 84 - 68);               /* FlatTensor: segments, named_data */
  P32(72, 1); P32(76, 100 - 76);                                 /* [DataSegment] */
  P32(84, 1); P32(88, 132 - 88);                                 /* [NamedData] */
  P16(92, 8); P16(94, 20); P16(96, 4); P16(98, 12);              /* DataSegment vtable: u64s 8-aligned */
  P32(100, 8); P64(104, 0); P64(112, size);                      /* DataSegment {0, size} */
  P16(124, 8); P16(126, 12); P16(128, 4); P16(130, 8);           /* NamedData vtable */
  P32(132, 8); P32(136, 144 - 136); P32(140, 0);                 /* NamedData {key, segment 0} */
  P32(144, key_len);
  memcpy(b + 148, key, key_len);
#undef P16
#undef P32
#undef P64
  memcpy(b + seg_base, data, size);
  return seg_base + size;
}

/* Named keys: .ptd first, then the program; a key in two .ptd files is an error, one in a .ptd and the program
 * the .ptd's. */
static void check_resolution_order(const char* dir) {
  char* path = et_path(dir, "linear129.pte");
  xpack_error err;
  xpack_et_program* p;
  if (xpack_et_program_open(path, &p, &err) != XPACK_OK) {
    EXPECT_MSG(0, "%s", err.message);
    free(path);
    return;
  }
  free(path);
  xpack_et_xnn_graph* g;
  if (xpack_et_xnn_graph_open(p, 0, 0, &g, &err) != XPACK_OK) {
    EXPECT_MSG(0, "%s", err.message);
    xpack_et_program_close(p);
    return;
  }
  const xpack_et_xnn_value* w = xpack_et_xnn_graph_find_value(g, g->nodes[0].u.fully_connected.filter_id);
  const xpack_et_xnn_constant_entry* e = &g->constant_entries[w->constant_buffer_idx];
  static uint8_t ptd_bytes[256 + 64 * 129 * 4];
  uint8_t fake[64 * 129 * 4];
  memset(fake, 0x5a, sizeof fake);
  size_t n = build_ptd(ptd_bytes, sizeof ptd_bytes, e->named_key, e->named_key_len, fake, sizeof fake);
  xpack_et_ptd* t1 = NULL;
  xpack_et_ptd* t2 = NULL;
  EXPECT_MSG(xpack_et_ptd_open_memory(ptd_bytes, n, "made.ptd", &t1, &err) == XPACK_OK, "made ptd: %s", err.message);
  EXPECT_MSG(xpack_et_ptd_open_memory(ptd_bytes, n, "copy.ptd", &t2, &err) == XPACK_OK, "made ptd: %s", err.message);
  if (t1 && t2) {
    const xpack_et_ptd* one[1] = {t1};
    const xpack_et_ptd* two[2] = {t1, t2};
    xpack_et_constant c;
    xpack_et_named_sources only_ptd = {NULL, one, 1};
    EXPECT_MSG(xpack_et_xnn_resolve_constant(g, w->constant_buffer_idx, &only_ptd, &c, &err) == XPACK_OK &&
               c.source == XPACK_ET_CONSTANT_PTD && c.data == ptd_bytes + 256 && c.size == sizeof fake,
          "key served from the .ptd: %s", err.message);
    /* In both the .ptd and the program: the .ptd's bytes, as ExecuTorch's MergedDataMap serves them. */
    xpack_et_named_sources both = {p, one, 1};
    EXPECT_MSG(xpack_et_xnn_resolve_constant(g, w->constant_buffer_idx, &both, &c, &err) == XPACK_OK &&
               c.source == XPACK_ET_CONSTANT_PTD && c.data == ptd_bytes + 256,
          "key in .ptd and .pte: %s", err.message);
    xpack_et_named_sources twice = {NULL, two, 2};
    EXPECT_MSG(xpack_et_xnn_resolve_constant(g, w->constant_buffer_idx, &twice, &c, &err) == XPACK_ERR_BAD_INPUT &&
               strstr(err.message, "copy.ptd") != NULL,
          "key in two .ptd files: %s", err.message);
    /* The bias key is only in the program: still found after the .ptd misses. */
    const xpack_et_xnn_value* b = xpack_et_xnn_graph_find_value(g, g->nodes[0].u.fully_connected.bias_id);
    EXPECT_MSG(xpack_et_xnn_resolve_constant(g, b->constant_buffer_idx, &both, &c, &err) == XPACK_OK &&
               c.source == XPACK_ET_CONSTANT_PTE_NAMED_DATA,
          "fallback to the program: %s", err.message);
  }
  xpack_et_ptd_close(t1);
  xpack_et_ptd_close(t2);
  xpack_et_xnn_graph_free(g);
  xpack_et_program_close(p);
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : NULL;
  et_require_dir(dir);
  DIR* d = opendir(dir);
  if (!d) return 1;
  struct dirent* ent;
  int files = 0;
  while ((ent = readdir(d)) != NULL) {
    size_t n = strlen(ent->d_name);
    if (n > 4 && strcmp(ent->d_name + n - 4, ".pte") == 0) {
      check_program(dir, ent->d_name);
      files++;
    } else if (n > 4 && strcmp(ent->d_name + n - 4, ".ptd") == 0) {
      check_ptd(dir, ent->d_name);
      files++;
    }
  }
  closedir(d);
  EXPECT_MSG(files >= 20, "only %d files found", files);
  check_linear129(dir);
  check_per_channel_scales(dir);
  check_named_lookup(dir);
  check_resolution_order(dir);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("all %d real files ok\n", files);
  return 0;
}
