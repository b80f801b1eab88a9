/*
 * xpack_family.h - packing families: what decides how XNNPACK lays out a packed weight.
 *
 * XNNPACK packs a static weight with the microkernel configuration it picks for the operator and
 * datatypes at hand, on this CPU. Two machines with the same XNNPACK build can pick different
 * configurations (an AVX2 CPU and an SSE4 one tile differently), and then the same weight packs to
 * different bytes. A family names everything that choice depends on besides the CPU: the operator,
 * the datatypes of its input, filter, bias and output (with the quantization scheme and block size)
 * and the flags that change the layout. Every entry of a cache file belongs to one family, and the
 * file records, per family, the XXH3-64 of a small canonical probe packed at pack time; a loader
 * re-runs the probe and serves a family's entries only when it packs to the same bytes here
 * (docs/FORMAT.md, section 5.8).
 *
 * A family is written as a name, e.g. "fully_connected in=f32 w=f32 b=f32 out=f32 transpose=0";
 * xpack_family_format and xpack_family_parse convert between the two, and only families this xpack
 * can probe parse (the list is in docs/FORMAT.md).
 */
#ifndef XPACK_FAMILY_H
#define XPACK_FAMILY_H

#include <stddef.h>
#include <stdint.h>

#include <xnnpack.h>

#include "xpack_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The operators whose weights XNNPACK offers to a weights cache. Depthwise convolution only in the
 * XNNPACKs of ExecuTorch 1.x (1adaa7c7, 92a7ad50); its families do not parse with 4ea82e5, and neither does the
 * bf16 fully-connected family (4ea82e5 has no bf16 fully-connected). */
typedef enum xpack_family_op {
  XPACK_OP_FULLY_CONNECTED = 1,
  XPACK_OP_CONVOLUTION_2D = 2,
  XPACK_OP_DECONVOLUTION_2D = 3,
  XPACK_OP_DEPTHWISE_CONVOLUTION_2D = 4,
} xpack_family_op;

typedef struct xpack_family {
  xpack_family_op op;
  enum xnn_datatype input;  /* as defined in the subgraph: xnn_datatype_qdint8 for dynamically quantized */
  enum xnn_datatype filter;
  enum xnn_datatype bias;   /* xnn_datatype_invalid: the node has no bias */
  enum xnn_datatype output;
  uint32_t block_size;      /* xnn_datatype_qbint4 filters: the block size; else 0 */
  uint32_t transpose;       /* fully connected: 1 with XNN_FLAG_TRANSPOSE_WEIGHTS; else 0 */
} xpack_family;

/* The longest family name, with its NUL. */
#define XPACK_FAMILY_NAME_MAX 96

/* Writes the canonical name of `family` into name[0, cap) (NUL-terminated) and stores its length in
 * *len (len may be NULL).
 * Errors: XPACK_ERR_UNSUPPORTED when the family is not one this xpack can probe (the name is then
 * still written, for messages, when cap allows), XPACK_ERR_ARG for NULL or a too small buffer. */
xpack_status xpack_family_format(const xpack_family* family, char* name, size_t cap, size_t* len, xpack_error* err);

/* Parses a canonical name (exactly as xpack_family_format writes it: a name in any other spelling is
 * not a family of this version). Errors: XPACK_ERR_UNSUPPORTED, XPACK_ERR_ARG. */
xpack_status xpack_family_parse(const char* name, size_t len, xpack_family* out, xpack_error* err);

/* Short datatype names used in family names: "f32", "f16", "bf16", "qd8", "qs8", "qu8", "qc8w", "qc4w", "qb4w",
 * "qs32", "qc32", "none" (xnn_datatype_invalid); "?" for any other. Never NULL. */
const char* xpack_family_datatype_name(enum xnn_datatype datatype);

#ifdef __cplusplus
}
#endif
#endif /* XPACK_FAMILY_H */
