/* Packing families: the list of families this xpack can probe, and their canonical names.
 *
 * The list mirrors the datatype combinations XNNPACK's subgraph API accepts for each operator (its
 * validate_datatypes_* checks in fully-connected.c, convolution-2d.c and deconvolution-2d.c). A name
 * outside it is refused before anything reaches XNNPACK: some combinations XNNPACK does not validate
 * end in XNN_UNREACHABLE, and a family name comes from a file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/xnn_compat.h"
#include "xpack_family.h"

#include "common/error.h"

enum { BIAS_NONE = 1, BIAS_F32 = 2, BIAS_F16 = 4, BIAS_QS32 = 8, BIAS_QC32 = 16 };

typedef struct known_family {
  xpack_family_op op;
  enum xnn_datatype input, filter, output;
  unsigned biases; /* BIAS_* the operator accepts with these datatypes */
} known_family;

#define F32 xnn_datatype_fp32
#define F16 xnn_datatype_fp16
#define QD8 xnn_datatype_qdint8
#define QS8 xnn_datatype_qint8
#define QU8 xnn_datatype_quint8
#define QC8W xnn_datatype_qcint8
#define QC4W xnn_datatype_qcint4
#define QB4W xnn_datatype_qbint4
#define BF16 xnn_datatype_bf16

static const known_family kKnown[] = {
    {XPACK_OP_FULLY_CONNECTED, F32, F32, F32, BIAS_NONE | BIAS_F32},
    {XPACK_OP_FULLY_CONNECTED, F16, F32, F16, BIAS_NONE | BIAS_F32},
    {XPACK_OP_FULLY_CONNECTED, F16, F16, F16, BIAS_NONE | BIAS_F16},
#if XPACK_XNN_HAS_BF16_FULLY_CONNECTED
    /* XNNPACK's only bf16 fully-connected writes fp32: a bf16 output is defined through an fp32 one. */
    {XPACK_OP_FULLY_CONNECTED, BF16, BF16, F32, BIAS_NONE | BIAS_F32},
#endif
    {XPACK_OP_FULLY_CONNECTED, F32, QC8W, F32, BIAS_NONE | BIAS_F32},
    {XPACK_OP_FULLY_CONNECTED, F32, QC4W, F32, BIAS_NONE | BIAS_F32},
    {XPACK_OP_FULLY_CONNECTED, QD8, QC8W, F32, BIAS_NONE | BIAS_F32},
    {XPACK_OP_FULLY_CONNECTED, QD8, QC8W, F16, BIAS_NONE | BIAS_F32},
    {XPACK_OP_FULLY_CONNECTED, QD8, QC4W, F32, BIAS_NONE | BIAS_F32},
    {XPACK_OP_FULLY_CONNECTED, QD8, QC4W, F16, BIAS_NONE | BIAS_F32},
    {XPACK_OP_FULLY_CONNECTED, QD8, QB4W, F32, BIAS_NONE | BIAS_F32},
    {XPACK_OP_FULLY_CONNECTED, QD8, QB4W, F16, BIAS_NONE | BIAS_F32},
    {XPACK_OP_FULLY_CONNECTED, QS8, QC8W, QS8, BIAS_NONE | BIAS_QC32},
    {XPACK_OP_FULLY_CONNECTED, QS8, QS8, QS8, BIAS_NONE | BIAS_QS32},
    {XPACK_OP_FULLY_CONNECTED, QU8, QU8, QU8, BIAS_NONE | BIAS_QS32},
    {XPACK_OP_CONVOLUTION_2D, F32, F32, F32, BIAS_NONE | BIAS_F32},
    {XPACK_OP_CONVOLUTION_2D, F16, F32, F16, BIAS_NONE | BIAS_F32},
    {XPACK_OP_CONVOLUTION_2D, QD8, QC8W, F32, BIAS_NONE | BIAS_F32},
    {XPACK_OP_CONVOLUTION_2D, QD8, QC8W, F16, BIAS_NONE | BIAS_F32},
    {XPACK_OP_CONVOLUTION_2D, QS8, QC8W, QS8, BIAS_NONE | BIAS_QC32},
    {XPACK_OP_CONVOLUTION_2D, QS8, QS8, QS8, BIAS_NONE | BIAS_QS32},
    {XPACK_OP_CONVOLUTION_2D, QU8, QU8, QU8, BIAS_NONE | BIAS_QS32},
    {XPACK_OP_DECONVOLUTION_2D, F32, F32, F32, BIAS_NONE | BIAS_F32},
    {XPACK_OP_DECONVOLUTION_2D, F16, F32, F16, BIAS_NONE | BIAS_F32},
    {XPACK_OP_DECONVOLUTION_2D, QD8, QC8W, F32, BIAS_NONE | BIAS_F32},
    {XPACK_OP_DECONVOLUTION_2D, QS8, QC8W, QS8, BIAS_NONE | BIAS_QC32},
    {XPACK_OP_DECONVOLUTION_2D, QS8, QS8, QS8, BIAS_NONE | BIAS_QS32},
    {XPACK_OP_DECONVOLUTION_2D, QU8, QU8, QU8, BIAS_NONE | BIAS_QS32},
#if XPACK_XNN_CACHES_DEPTHWISE_WEIGHTS
    {XPACK_OP_DEPTHWISE_CONVOLUTION_2D, F32, F32, F32, BIAS_NONE | BIAS_F32},
    {XPACK_OP_DEPTHWISE_CONVOLUTION_2D, F16, F32, F16, BIAS_NONE | BIAS_F32},
    {XPACK_OP_DEPTHWISE_CONVOLUTION_2D, QS8, QC8W, QS8, BIAS_NONE | BIAS_QC32},
    {XPACK_OP_DEPTHWISE_CONVOLUTION_2D, QS8, QS8, QS8, BIAS_NONE | BIAS_QS32},
    {XPACK_OP_DEPTHWISE_CONVOLUTION_2D, QU8, QU8, QU8, BIAS_NONE | BIAS_QS32},
#endif
};

/* Blockwise 4-bit weights: XNNPACK packs blocks of a multiple of 32 input channels. */
#define MAX_BLOCK_SIZE 4096

static unsigned bias_bit(enum xnn_datatype bias) {
  switch (bias) {
    case xnn_datatype_invalid: return BIAS_NONE;
    case xnn_datatype_fp32: return BIAS_F32;
    case xnn_datatype_fp16: return BIAS_F16;
    case xnn_datatype_qint32: return BIAS_QS32;
    case xnn_datatype_qcint32: return BIAS_QC32;
    default: return 0;
  }
}

static int is_known(const xpack_family* f) {
  /* Transposed weights: only fp32 filters. XNNPACK leaves the transposed packer of other filter types
   * unset on some targets and then calls a NULL function. */
  if (f->transpose > 1 || (f->transpose && (f->op != XPACK_OP_FULLY_CONNECTED || f->filter != F32))) return 0;
  if (f->filter == QB4W) {
    if (f->block_size == 0 || f->block_size % 32 != 0 || f->block_size > MAX_BLOCK_SIZE) return 0;
  } else if (f->block_size != 0) {
    return 0;
  }
  for (size_t i = 0; i < sizeof kKnown / sizeof kKnown[0]; i++) {
    const known_family* k = &kKnown[i];
    if (k->op == f->op && k->input == f->input && k->filter == f->filter && k->output == f->output &&
        (k->biases & bias_bit(f->bias)) != 0) {
      return 1;
    }
  }
  return 0;
}

static const char* op_name(xpack_family_op op) {
  switch (op) {
    case XPACK_OP_FULLY_CONNECTED: return "fully_connected";
    case XPACK_OP_CONVOLUTION_2D: return "convolution_2d";
    case XPACK_OP_DECONVOLUTION_2D: return "deconvolution_2d";
    case XPACK_OP_DEPTHWISE_CONVOLUTION_2D: return "depthwise_convolution_2d";
    default: return "?";
  }
}

const char* xpack_family_datatype_name(enum xnn_datatype datatype) {
  switch (datatype) {
    case xnn_datatype_invalid: return "none";
    case xnn_datatype_fp32: return "f32";
    case xnn_datatype_fp16: return "f16";
    case xnn_datatype_bf16: return "bf16";
    case xnn_datatype_qdint8: return "qd8";
    case xnn_datatype_qint8: return "qs8";
    case xnn_datatype_quint8: return "qu8";
    case xnn_datatype_qcint8: return "qc8w";
    case xnn_datatype_qcint4: return "qc4w";
    case xnn_datatype_qbint4: return "qb4w";
    case xnn_datatype_qint32: return "qs32";
    case xnn_datatype_qcint32: return "qc32";
    default: return "?";
  }
}

xpack_status xpack_family_format(const xpack_family* f, char* name, size_t cap, size_t* len, xpack_error* err) {
  if (f == NULL || name == NULL || cap == 0) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_family_format: %s", f == NULL ? "the family is NULL"
                                                                     : name == NULL ? "the name buffer is NULL"
                                                                                    : "a name buffer of 0 bytes");
  }
  char block[24] = "";
  if (f->filter == QB4W || f->block_size != 0) snprintf(block, sizeof block, " block=%u", f->block_size);
  char transpose[16] = "";
  if (f->op == XPACK_OP_FULLY_CONNECTED || f->transpose != 0) {
    snprintf(transpose, sizeof transpose, " transpose=%u", f->transpose);
  }
  int n = snprintf(name, cap, "%s in=%s w=%s%s b=%s out=%s%s", op_name(f->op), xpack_family_datatype_name(f->input),
                   xpack_family_datatype_name(f->filter), block, xpack_family_datatype_name(f->bias),
                   xpack_family_datatype_name(f->output), transpose);
  if (n < 0 || (size_t)n >= cap) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_family_format: a name buffer of %zu bytes (the name needs %d)", cap,
                   n + 1);
  }
  if (len != NULL) *len = (size_t)n;
  if (!is_known(f)) {
    return xp_fail(err, XPACK_ERR_UNSUPPORTED, "%s: not a packing family this xpack can probe", name);
  }
  return XPACK_OK;
}

/* Parsing goes the other way round through the same formatter: a name is a family exactly when some
 * known family formats to it, so there is one spelling and no second grammar to keep in step. */
static int datatype_of(const char* s, size_t n, enum xnn_datatype* out) {
  static const enum xnn_datatype all[] = {xnn_datatype_invalid, F32, F16, BF16, QD8, QS8, QU8, QC8W, QC4W, QB4W,
                                          xnn_datatype_qint32, xnn_datatype_qcint32};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    const char* name = xpack_family_datatype_name(all[i]);
    if (strlen(name) == n && memcmp(name, s, n) == 0) {
      *out = all[i];
      return 0;
    }
  }
  return -1;
}

/* The value of `key=` among the space-separated tokens of name[0, len), or NULL. */
static const char* token_value(const char* name, size_t len, const char* key, size_t* value_len) {
  size_t klen = strlen(key);
  for (size_t i = 0; i + klen <= len; i++) {
    if ((i == 0 || name[i - 1] == ' ') && memcmp(name + i, key, klen) == 0) {
      size_t j = i + klen;
      while (j < len && name[j] != ' ') j++;
      *value_len = j - (i + klen);
      return name + i + klen;
    }
  }
  return NULL;
}

static xpack_status parse_name(const char* name, size_t len, xpack_family* out) {
  if (len == 0 || len >= XPACK_FAMILY_NAME_MAX || memchr(name, 0, len) != NULL) return XPACK_ERR_UNSUPPORTED;
  xpack_family f;
  memset(&f, 0, sizeof f);
  static const xpack_family_op ops[] = {XPACK_OP_FULLY_CONNECTED, XPACK_OP_CONVOLUTION_2D, XPACK_OP_DECONVOLUTION_2D,
                                        XPACK_OP_DEPTHWISE_CONVOLUTION_2D};
  f.op = 0;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    size_t n = strlen(op_name(ops[i]));
    if (len > n && memcmp(name, op_name(ops[i]), n) == 0 && name[n] == ' ') f.op = ops[i];
  }
  if (f.op == 0) return XPACK_ERR_UNSUPPORTED;
  const char* v;
  size_t vlen;
  if ((v = token_value(name, len, "in=", &vlen)) == NULL || datatype_of(v, vlen, &f.input) != 0) return XPACK_ERR_UNSUPPORTED;
  if ((v = token_value(name, len, "w=", &vlen)) == NULL || datatype_of(v, vlen, &f.filter) != 0) return XPACK_ERR_UNSUPPORTED;
  if ((v = token_value(name, len, "b=", &vlen)) == NULL || datatype_of(v, vlen, &f.bias) != 0) return XPACK_ERR_UNSUPPORTED;
  if ((v = token_value(name, len, "out=", &vlen)) == NULL || datatype_of(v, vlen, &f.output) != 0) return XPACK_ERR_UNSUPPORTED;
  if ((v = token_value(name, len, "block=", &vlen)) != NULL) {
    if (vlen == 0 || vlen > 5 || v[0] == '0') return XPACK_ERR_UNSUPPORTED;
    for (size_t i = 0; i < vlen; i++) {
      if (v[i] < '0' || v[i] > '9') return XPACK_ERR_UNSUPPORTED;
      f.block_size = f.block_size * 10 + (uint32_t)(v[i] - '0');
    }
  }
  if ((v = token_value(name, len, "transpose=", &vlen)) != NULL) {
    if (vlen != 1 || (v[0] != '0' && v[0] != '1')) return XPACK_ERR_UNSUPPORTED;
    f.transpose = (uint32_t)(v[0] - '0');
  }
  char canonical[XPACK_FAMILY_NAME_MAX];
  size_t clen = 0;
  if (xpack_family_format(&f, canonical, sizeof canonical, &clen, NULL) != XPACK_OK || clen != len ||
      memcmp(canonical, name, len) != 0) {
    return XPACK_ERR_UNSUPPORTED;
  }
  *out = f;
  return XPACK_OK;
}

xpack_status xpack_family_parse(const char* name, size_t len, xpack_family* out, xpack_error* err) {
  if (name == NULL || out == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_family_parse: %s is NULL", name == NULL ? "the name" : "out");
  }
  if (parse_name(name, len, out) != XPACK_OK) {
    return xp_fail(err, XPACK_ERR_UNSUPPORTED, "'%.*s' is not the name of a packing family this xpack knows",
                   (int)(len < XPACK_FAMILY_NAME_MAX ? len : XPACK_FAMILY_NAME_MAX), name);
  }
  return XPACK_OK;
}
