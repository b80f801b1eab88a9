/*
 * xpack_executorch.h - read ExecuTorch programs (.pte), external weight files (.ptd) and the
 * XNNPACK delegate blobs inside them, without the flatbuffers library and without copying weights.
 *
 * Model files are untrusted input: every offset, length and index is checked before use; a
 * malformed file gives XPACK_ERR_BAD_INPUT with a message naming the file, the field path or byte
 * offset and what was expected (e.g. "model.pte: execution_plan[0].delegates[2].processed.index:
 * 7 but the program has 3 segments"); nothing in these functions crashes on any input.
 *
 * Ownership in one place:
 *  - xpack_et_program / xpack_et_ptd own their mapping (open from a path: a read-only mmap) or
 *    borrow the caller's bytes (open_memory: the caller keeps them alive and unchanged until close).
 *  - Every pointer handed out by this API (strings, byte ranges, arrays) points into that mapping or
 *    into memory owned by the object it came from, and stays valid until that object is closed or
 *    freed. An xpack_et_xnn_graph borrows its blob, so close the graph before its program.
 *  - Strings from files (names, keys, backend ids) are NUL-terminated and also carry a length: keys
 *    are compared as bytes, exactly as ExecuTorch does.
 *
 * Errors (xpack_status, with the message in the optional xpack_error*):
 *  XPACK_ERR_BAD_INPUT    malformed .pte/.ptd/blob (including "this is a ZIP", "no ET12 identifier")
 *  XPACK_ERR_UNSUPPORTED  well-formed but beyond this reader (unknown union type, schema ET13, ...)
 *  XPACK_ERR_IO           open/stat/mmap failed (errno text in the message)
 *  XPACK_ERR_NOMEM        an allocation failed
 *  XPACK_ERR_ARG          NULL where an object is required, index out of range
 *
 * Thread safety: objects are immutable after open/parse; concurrent reads are fine.
 */
#ifndef XPACK_EXECUTORCH_H
#define XPACK_EXECUTORCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "xpack_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ===================================================================================== .pte == */

/* Where a delegate's processed bytes live (BackendDelegateDataReference.location). */
typedef enum xpack_et_location {
  XPACK_ET_LOCATION_INLINE = 0,  /* Program.backend_delegate_data[index].data */
  XPACK_ET_LOCATION_SEGMENT = 1, /* Program.segments[index] */
} xpack_et_location;

typedef struct xpack_et_compile_spec {
  const char* key; /* may be NULL when the file omits it */
  size_t key_len;
  const uint8_t* value;
  size_t value_size;
} xpack_et_compile_spec;

typedef struct xpack_et_delegate {
  const char* backend_id; /* e.g. "XnnpackBackend" */
  size_t backend_id_len;
  bool is_xnnpack; /* backend_id == "XnnpackBackend" */
  xpack_et_location location;
  uint32_t index;       /* into backend_delegate_data (INLINE) or segments (SEGMENT) */
  const uint8_t* data;  /* the processed bytes (the XNNPACK blob for XNNPACK delegates) */
  size_t size;
  uint64_t file_offset; /* of data within the .pte */
  const xpack_et_compile_spec* compile_specs;
  size_t compile_spec_count;
} xpack_et_delegate;

typedef struct xpack_et_method {
  const char* name; /* ExecutionPlan.name; NULL if absent */
  size_t name_len;
  const xpack_et_delegate* delegates;
  size_t delegate_count;
} xpack_et_method;

typedef struct xpack_et_segment {
  uint64_t offset; /* absolute file offset (segment_base_offset already added) */
  uint64_t size;
} xpack_et_segment;

typedef struct xpack_et_named_data {
  const char* key;
  size_t key_len;
  uint32_t segment_index;
  const uint8_t* data; /* the whole segment */
  size_t size;
} xpack_et_named_data;

typedef struct xpack_et_program_info {
  const char* name; /* the path or the name given to open_memory */
  size_t file_size;
  uint32_t version;              /* Program.version */
  uint32_t extended_header_size; /* 0 when the file has no eh00 header */
  uint64_t program_size;         /* flatbuffer bytes (whole file without eh00) */
  uint64_t segment_base_offset;  /* 0 = no segments */
  uint64_t segment_data_size;    /* 0 when the header is the 24-byte form */
  const xpack_et_method* methods;
  size_t method_count;
  const xpack_et_segment* segments;
  size_t segment_count;
  const xpack_et_named_data* named_data; /* in file order */
  size_t named_data_count;
  size_t inline_delegate_data_count; /* Program.backend_delegate_data */
  size_t legacy_constant_buffer_count; /* Program.constant_buffer (deprecated 2024-09) */
  size_t xnnpack_delegate_count;       /* over all methods */
} xpack_et_program_info;

typedef struct xpack_et_program xpack_et_program;

/* Maps `path` read-only and parses it. On success *out owns the mapping; close it with
 * xpack_et_program_close. Errors: IO, NOMEM, BAD_INPUT, UNSUPPORTED, ARG. */
xpack_status xpack_et_program_open(const char* path, xpack_et_program** out, xpack_error* err);

/* Flags of xpack_et_program_open_flags and xpack_et_ptd_open_flags. */
enum {
  /* For a process that expects its packed weights from a cache. The kernel reads around every page fault
   * of a file mapping (its read-ahead window: 8 MiB on the disk of docs/BENCHMARKS.md, 128 KiB to a few
   * MiB on phones), so parsing the start of a small program would read its weights too. With this flag
   * the mapping is advised MADV_RANDOM before anything is read, and the parts every run reads (headers and
   * flatbuffer, delegate blobs) MADV_WILLNEED, in large reads: on a full hit the raw weights are never
   * read, also cold, but for what must be read all the same (constants whose identity hashes their bytes,
   * quantization scales: xpack_et_read_ahead asks for those in large reads). A weight XNNPACK packs after all
   * (a miss) is read page by page as it is touched.
   * Files under 512 KiB are read whole all the same: one read costs less there than several small ones. */
  XPACK_ET_OPEN_WEIGHTS_ON_DEMAND = 1u,
};
/* As xpack_et_program_open, with XPACK_ET_OPEN_* flags (ARG for unknown bits). */
xpack_status xpack_et_program_open_flags(const char* path, unsigned flags, xpack_et_program** out, xpack_error* err);
/* Undoes XPACK_ET_OPEN_WEIGHTS_ON_DEMAND (the kernel's default read-around again) for a process whose cache
 * turned out unusable after the program was opened: XNNPACK will pack every weight, and page-by-page reads
 * of all of them would be far slower than read-around. A hint; nothing for NULL or an unmapped program. */
void xpack_et_program_read_weights_ahead(const xpack_et_program* program);

/* Parses caller-owned bytes (no copy; they must outlive the program). `name` (copied) is used in
 * messages; NULL means "(memory)". Same errors as xpack_et_program_open except IO. */
xpack_status xpack_et_program_open_memory(const void* data, size_t size, const char* name, xpack_et_program** out,
                                          xpack_error* err);

/* Releases the program and its mapping. NULL is a no-op. */
void xpack_et_program_close(xpack_et_program* program);

/* The parsed view. Never NULL for an open program; owned by the program. */
const xpack_et_program_info* xpack_et_program_get_info(const xpack_et_program* program);

/* The whole file as mapped. */
const uint8_t* xpack_et_program_bytes(const xpack_et_program* program, size_t* size);

/* Looks `key` (key_len bytes, exact comparison) up in Program.named_data. Returns the entry or
 * NULL when absent. */
const xpack_et_named_data* xpack_et_program_find_named(const xpack_et_program* program, const char* key, size_t key_len);

/* Program.constant_buffer[index].storage (legacy, portable weights). ARG when index is out of range. */
xpack_status xpack_et_program_legacy_constant(const xpack_et_program* program, size_t index, const uint8_t** data,
                                              size_t* size, xpack_error* err);

/* ===================================================================================== .ptd == */

typedef enum xpack_et_ptd_layout {
  XPACK_ET_PTD_NAMED_DATA = 1, /* 2025-06 onward: segments + named_data */
  XPACK_ET_PTD_TENSORS = 2,    /* early 2025: tensor_alignment + tensors (TensorMetadata) + segments, and from
                                  2025-03 to 2025-06 named_data (key, segment_index) as a fifth field */
} xpack_et_ptd_layout;

typedef struct xpack_et_ptd_entry {
  const char* key; /* NamedData.key or TensorMetadata.fully_qualified_name */
  size_t key_len;
  uint32_t segment_index;
  const uint8_t* data; /* named_data: the whole segment; tensors: segment + offset, numel * element size */
  size_t size;
  int8_t scalar_type; /* ExecuTorch ScalarType when the file records one, else -1 */
} xpack_et_ptd_entry;

typedef struct xpack_et_ptd_info {
  const char* name;
  size_t file_size;
  xpack_et_ptd_layout layout;
  uint32_t version;
  uint64_t segment_base_offset;
  uint64_t segment_data_size;
  size_t segment_count;
  const xpack_et_ptd_entry* entries; /* in file order (tensors, then named_data); keys are unique */
  size_t entry_count;
} xpack_et_ptd_info;

typedef struct xpack_et_ptd xpack_et_ptd;

/* Maps and parses a FlatTensor file (FT01 identifier, FH01 header), either layout.
 * Errors: IO, NOMEM, BAD_INPUT (also for a duplicate key), UNSUPPORTED (unknown scalar type in the
 * early layout). */
xpack_status xpack_et_ptd_open(const char* path, xpack_et_ptd** out, xpack_error* err);
/* As xpack_et_ptd_open, with XPACK_ET_OPEN_* flags: everything past a .ptd's header and flatbuffer is
 * weights. */
xpack_status xpack_et_ptd_open_flags(const char* path, unsigned flags, xpack_et_ptd** out, xpack_error* err);
void xpack_et_ptd_read_weights_ahead(const xpack_et_ptd* ptd);
xpack_status xpack_et_ptd_open_memory(const void* data, size_t size, const char* name, xpack_et_ptd** out,
                                      xpack_error* err);
void xpack_et_ptd_close(xpack_et_ptd* ptd);
const xpack_et_ptd_info* xpack_et_ptd_get_info(const xpack_et_ptd* ptd);
/* Whether a constant of an XNNPACK delegate has resolved to one of ptd's entries since it was opened
 * (xpack_et_xnn_resolve_constant, from any thread): a .ptd no delegate names adds nothing to a cache. false for
 * NULL. */
bool xpack_et_ptd_was_named(const xpack_et_ptd* ptd);
/* The whole file as mapped. */
const uint8_t* xpack_et_ptd_bytes(const xpack_et_ptd* ptd, size_t* size);
/* Exact-bytes key lookup; NULL when absent. */
const xpack_et_ptd_entry* xpack_et_ptd_find(const xpack_et_ptd* ptd, const char* key, size_t key_len);

/* ======================================================================= XNNPACK delegate blob == */

/* Serialized XNNDatatype numbers (they differ from XNNPACK's enum xnn_datatype: map by name). */
typedef enum xpack_et_xnn_datatype {
  XPACK_ET_XNN_DT_INVALID = 0,
  XPACK_ET_XNN_DT_FP32 = 1,
  XPACK_ET_XNN_DT_FP16 = 2,
  XPACK_ET_XNN_DT_QINT8 = 3,
  XPACK_ET_XNN_DT_QUINT8 = 4,
  XPACK_ET_XNN_DT_QINT32 = 5,
  XPACK_ET_XNN_DT_QCINT8 = 6,
  XPACK_ET_XNN_DT_QCINT32 = 7,
  XPACK_ET_XNN_DT_QCINT4 = 8,
  XPACK_ET_XNN_DT_QDINT8 = 9,
  XPACK_ET_XNN_DT_QBINT4 = 10,
  XPACK_ET_XNN_DT_QPINT8 = 11,
  XPACK_ET_XNN_DT_INT32 = 12,
  XPACK_ET_XNN_DT_PFP32 = 13,
  XPACK_ET_XNN_DT_BF16 = 14,
} xpack_et_xnn_datatype;
#define XPACK_ET_XNN_DT_COUNT 15

/* "fp32", "qcint8", ... ("unknown" outside 0..14). Never NULL. */
const char* xpack_et_xnn_datatype_name(int datatype);

#define XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_INPUT 1u
#define XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_OUTPUT 2u
#define XPACK_ET_XNN_INVALID_ID UINT32_MAX /* absent bias and other optional ids */

typedef enum xpack_et_xnn_quant_kind {
  XPACK_ET_XNN_QUANT_NONE = 0,              /* XValue type 1: XNNTensorValue */
  XPACK_ET_XNN_QUANT_PER_CHANNEL = 1,       /* PerChannelQuant */
  XPACK_ET_XNN_QUANT_PER_TENSOR = 2,        /* PerTensorQuant */
  XPACK_ET_XNN_QUANT_PER_TOKEN_DYNAMIC = 3, /* PerTokenDynamicQuant */
  XPACK_ET_XNN_QUANT_PER_CHANNEL_GROUP = 4, /* PerChannelGroupQuant (blockwise) */
} xpack_et_xnn_quant_kind;

typedef struct xpack_et_xnn_quant {
  xpack_et_xnn_quant_kind kind;
  float scale;               /* PER_TENSOR */
  int32_t zero_point;        /* PER_TENSOR */
  const float* scales;       /* PER_CHANNEL(_GROUP): the inline scale vector in the blob, or NULL */
  uint32_t scale_count;      /* its length */
  uint32_t num_scales;       /* the num_scales field (0 when absent) */
  int32_t channel_dim;       /* PER_CHANNEL(_GROUP) */
  int32_t group_size;        /* PER_CHANNEL_GROUP */
  uint32_t scale_buffer_idx; /* PER_CHANNEL(_GROUP): non-zero = scales are a constant (resolve it) */
  int32_t num_nonbatch_dims; /* PER_TOKEN_DYNAMIC */
} xpack_et_xnn_quant;

typedef struct xpack_et_xnn_value {
  uint32_t index;                /* position in XNNGraph.xvalues */
  int16_t datatype;              /* serialized XNNDatatype number */
  const char* datatype_name;     /* xpack_et_xnn_datatype_name(datatype) */
  int16_t dq_datatype;           /* 0 (invalid) unless the legacy dynamic-quant marker is set */
  uint32_t num_dims;             /* == dims count (checked) */
  const uint32_t* dims;          /* owned by the graph */
  uint32_t constant_buffer_idx;  /* 0 = not a constant; resolve with xpack_et_xnn_resolve_constant */
  uint32_t external_id;
  uint32_t flags;                /* XPACK_ET_XNN_VALUE_FLAG_* */
  uint32_t id_out;               /* the id nodes and input_ids/output_ids use */
  xpack_et_xnn_quant quant;
} xpack_et_xnn_value;

/* XNodeUnion type codes (1..47). */
typedef enum xpack_et_xnn_node_type {
  XPACK_ET_XNN_ADD = 1, XPACK_ET_XNN_FULLY_CONNECTED = 2, XPACK_ET_XNN_SOFTMAX = 3, XPACK_ET_XNN_SIGMOID = 4,
  XPACK_ET_XNN_STATIC_TRANSPOSE = 5, XPACK_ET_XNN_CLAMP = 6, XPACK_ET_XNN_CONV2D = 7, XPACK_ET_XNN_DIV = 8,
  XPACK_ET_XNN_STATIC_RESIZE_BILINEAR_2D = 9, XPACK_ET_XNN_STATIC_CONSTANT_PAD = 10,
  XPACK_ET_XNN_AVG_POOLING_2D = 11, XPACK_ET_XNN_MINIMUM = 12, XPACK_ET_XNN_DEPTHWISE_CONV2D = 13,
  XPACK_ET_XNN_MAX_POOLING_2D = 14, XPACK_ET_XNN_MULTIPLY = 15, XPACK_ET_XNN_SUBTRACT = 16, XPACK_ET_XNN_FLOOR = 17,
  XPACK_ET_XNN_CONVERT = 18, XPACK_ET_XNN_GLOBAL_AVG_POOLING_2D = 19, XPACK_ET_XNN_STATIC_RESHAPE = 20,
  XPACK_ET_XNN_ARGMAX_POOLING_2D = 21, XPACK_ET_XNN_SQUARE_ROOT = 22, XPACK_ET_XNN_CEILING = 23,
  XPACK_ET_XNN_HARDSWISH = 24, XPACK_ET_XNN_LEAKY_RELU = 25, XPACK_ET_XNN_MAXIMUM = 26, XPACK_ET_XNN_NEGATE = 27,
  XPACK_ET_XNN_SQUARE = 28, XPACK_ET_XNN_ELU = 29, XPACK_ET_XNN_ABS = 30, XPACK_ET_XNN_PRELU = 31,
  XPACK_ET_XNN_CONCATENATE2 = 32, XPACK_ET_XNN_CONCATENATE3 = 33, XPACK_ET_XNN_CONCATENATE4 = 34,
  XPACK_ET_XNN_STATIC_SLICE = 35, XPACK_ET_XNN_SCALED_DOT_PRODUCT_ATTENTION = 36,
  XPACK_ET_XNN_BATCH_MATRIX_MULTIPLY = 37, XPACK_ET_XNN_CONCATENATE5 = 38, XPACK_ET_XNN_CONV_TRANSPOSE2D = 39,
  XPACK_ET_XNN_RECIPROCAL_SQUARE_ROOT = 40, XPACK_ET_XNN_LOG = 41, XPACK_ET_XNN_GELU = 42, XPACK_ET_XNN_TANH = 43,
  XPACK_ET_XNN_EXP = 44, XPACK_ET_XNN_SIN = 45, XPACK_ET_XNN_COPY = 46, XPACK_ET_XNN_COS = 47,
} xpack_et_xnn_node_type;
#define XPACK_ET_XNN_NODE_TYPE_MAX 47

/* "Add", "FullyConnected", ... (the reference's names without the XNN prefix); "unknown" otherwise. */
const char* xpack_et_xnn_node_type_name(int type);

/* Which node table a type uses; decides the member of xpack_et_xnn_node.u. */
typedef enum xpack_et_xnn_layout {
  XPACK_ET_XNN_LAYOUT_BINARY = 1,          /* _XNNNode2x1 -> u.binary */
  XPACK_ET_XNN_LAYOUT_UNARY,               /* _XNNNode1x1 -> u.unary */
  XPACK_ET_XNN_LAYOUT_FULLY_CONNECTED,     /* u.fully_connected */
  XPACK_ET_XNN_LAYOUT_CONV,                /* _XNNNodeConv -> u.conv (Conv2d, DepthwiseConv2d, ConvTranspose2d) */
  XPACK_ET_XNN_LAYOUT_POOLING,             /* _XNNPooling2D -> u.pooling */
  XPACK_ET_XNN_LAYOUT_CONCATENATE,         /* _XNNCat -> u.concatenate */
  XPACK_ET_XNN_LAYOUT_STATIC_TRANSPOSE,    /* u.transpose */
  XPACK_ET_XNN_LAYOUT_STATIC_RESIZE_BILINEAR_2D, /* u.resize_bilinear */
  XPACK_ET_XNN_LAYOUT_STATIC_CONSTANT_PAD, /* u.constant_pad */
  XPACK_ET_XNN_LAYOUT_STATIC_RESHAPE,      /* u.reshape */
  XPACK_ET_XNN_LAYOUT_STATIC_SLICE,        /* u.slice */
  XPACK_ET_XNN_LAYOUT_ELU,                 /* u.elu */
  XPACK_ET_XNN_LAYOUT_LEAKY_RELU,          /* u.leaky_relu */
  XPACK_ET_XNN_LAYOUT_ARGMAX_POOLING,      /* u.argmax_pooling */
  XPACK_ET_XNN_LAYOUT_SDPA,                /* u.sdpa */
} xpack_et_xnn_layout;

xpack_et_xnn_layout xpack_et_xnn_node_layout(int type); /* 0 for an unknown type */

typedef struct xpack_et_u32_array {
  const uint32_t* data; /* owned by the graph */
  uint32_t count;
} xpack_et_u32_array;

typedef struct xpack_et_xnn_node {
  uint32_t index;        /* position in XNNGraph.xnodes */
  uint8_t type;          /* xpack_et_xnn_node_type */
  const char* type_name; /* xpack_et_xnn_node_type_name(type) */
  xpack_et_xnn_layout layout;
  uint32_t debug_handle;
  bool has_output_min_max; /* false: output_min = -INFINITY, output_max = +INFINITY */
  float output_min;
  float output_max;
  union {
    struct { uint32_t input1_id, input2_id, output_id, flags; } binary;
    struct { uint32_t input_id, output_id, flags; } unary;
    struct { uint32_t input1_id, filter_id, bias_id, output_id, flags; } fully_connected;
    struct {
      uint32_t padding_top, padding_right, padding_bottom, padding_left;
      uint32_t kernel_height, kernel_width, subsampling_height, subsampling_width;
      uint32_t dilation_height, dilation_width;
      uint32_t group_input_channels, group_output_channels, groups;
      uint32_t adjustment_height, adjustment_width;
      uint32_t input1_id, filter_id, bias_id, output_id, flags;
    } conv;
    struct {
      uint32_t padding_top, padding_right, padding_bottom, padding_left;
      uint32_t pooling_height, pooling_width, stride_height, stride_width;
      uint32_t dilation_height, dilation_width;
      uint32_t input_id, output_id, flags;
    } pooling;
    struct { uint32_t axis, input1_id, input2_id, input3_id, input4_id, output_id, flags, input5_id; } concatenate;
    struct { uint32_t num_dims; xpack_et_u32_array perm; uint32_t input_id, output_id, flags; } transpose;
    struct { uint32_t new_height, new_width, input_id, output_id, flags; } resize_bilinear;
    struct {
      xpack_et_u32_array pre_paddings, post_paddings;
      float padding_value;
      uint32_t input_id, output_id, flags;
    } constant_pad;
    struct { uint32_t num_dims; xpack_et_u32_array new_shape; uint32_t input_id, output_id, flags; } reshape;
    struct {
      uint32_t num_dims;
      xpack_et_u32_array offsets, sizes;
      uint32_t input_id, output_id, flags;
    } slice;
    struct { float alpha; uint32_t input_id, output_id, flags; } elu;
    struct { float negative_slope; uint32_t input_id, output_id, flags; } leaky_relu;
    struct {
      uint32_t padding_top, padding_right, padding_bottom, padding_left;
      uint32_t pooling_height, pooling_width;
      uint32_t input_id, output_value_id, output_index_id, flags;
    } argmax_pooling;
    struct { uint32_t query_id, key_id, value_id, scale_id, mask_id, output_id, flags; } sdpa;
  } u;
} xpack_et_xnn_node;

/* Generic view of a node's fields (for printing and JSON): one entry per serialized field in id
 * order, with its offset inside xpack_et_xnn_node. */
typedef enum xpack_et_xnn_field_kind {
  XPACK_ET_XNN_FIELD_U32 = 1,   /* uint32_t */
  XPACK_ET_XNN_FIELD_ID,        /* uint32_t value id (id_out) */
  XPACK_ET_XNN_FIELD_F32,       /* float */
  XPACK_ET_XNN_FIELD_U32_ARRAY, /* xpack_et_u32_array */
} xpack_et_xnn_field_kind;

typedef struct xpack_et_xnn_field {
  const char* name;
  xpack_et_xnn_field_kind kind;
  size_t offset; /* offsetof(xpack_et_xnn_node, ...) */
} xpack_et_xnn_field;

/* The fields of a layout; NULL and *count = 0 for an unknown layout. Static storage. */
const xpack_et_xnn_field* xpack_et_xnn_layout_fields(xpack_et_xnn_layout layout, size_t* count);

/* One XNNGraph.constant_data entry (blobs with the XH00 header). */
typedef struct xpack_et_xnn_constant_entry {
  uint64_t offset; /* relative to the blob's constant region */
  uint64_t size;
  const char* named_key; /* NULL when the field is absent (weights inside the blob) */
  size_t named_key_len;
} xpack_et_xnn_constant_entry;

typedef struct xpack_et_xnn_graph {
  const char* name;      /* message prefix, e.g. "m.pte: execution_plan[0].delegates[1]" (owned) */
  bool has_header;       /* XH00 present; false = legacy blob, weights in constant_buffer */
  char identifier[5];    /* "XN01" or "XN00" */
  const uint8_t* flatbuffer;
  size_t flatbuffer_size;
  const uint8_t* constant_data; /* the blob's constant region (has_header only) */
  uint64_t constant_data_size;
  const char* version;   /* XNNGraph.version, may be NULL */
  uint32_t num_externs;
  const xpack_et_xnn_value* values;
  size_t value_count;
  const xpack_et_xnn_node* nodes;
  size_t node_count;
  xpack_et_u32_array input_ids;
  xpack_et_u32_array output_ids;
  const xpack_et_xnn_constant_entry* constant_entries; /* XNNGraph.constant_data */
  size_t constant_entry_count;
  size_t legacy_constant_buffer_count; /* XNNGraph.constant_buffer */
} xpack_et_xnn_graph;

/* Parses an XNNPACK delegate blob (XH00 header or a bare legacy flatbuffer with identifier XN00 or
 * XN01). Checks every id a node, input_ids or output_ids mentions against the values' id_out, and
 * that num_dims matches the dims. The graph borrows `blob` (keep it alive) and owns everything
 * else; free with xpack_et_xnn_graph_free. `name` (copied) prefixes messages.
 * Errors: BAD_INPUT, UNSUPPORTED (unknown node or value type), NOMEM, ARG. */
xpack_status xpack_et_xnn_graph_parse(const void* blob, size_t size, const char* name, xpack_et_xnn_graph** out,
                                      xpack_error* err);

/* Parses program method `method`'s delegate `delegate`. ARG if the indices are out of range,
 * UNSUPPORTED if that delegate is not XNNPACK. */
xpack_status xpack_et_xnn_graph_open(const xpack_et_program* program, size_t method, size_t delegate,
                                     xpack_et_xnn_graph** out, xpack_error* err);

void xpack_et_xnn_graph_free(xpack_et_xnn_graph* graph);

/* The value whose id_out is `id`, or NULL. */
const xpack_et_xnn_value* xpack_et_xnn_graph_find_value(const xpack_et_xnn_graph* graph, uint32_t id);

/* The ids of a node whose filter and bias XNNPACK packs: FullyConnected, Conv2d, DepthwiseConv2d and
 * ConvTranspose2d (layouts FULLY_CONNECTED and CONV). Fills `ids` and returns true for such a node; returns false,
 * leaving `ids` alone, for any other. The one place that says which node types pack weights. */
typedef struct xpack_et_xnn_weight_ids {
  uint32_t input, filter, bias, output;
} xpack_et_xnn_weight_ids;
bool xpack_et_xnn_node_weight_ids(const xpack_et_xnn_node* node, xpack_et_xnn_weight_ids* ids);

/* ================================================================== constants and identities == */

typedef enum xpack_et_constant_source {
  XPACK_ET_CONSTANT_NONE = 0,            /* index 0: not a constant */
  XPACK_ET_CONSTANT_LEGACY_BUFFER = 1,   /* XNNGraph.constant_buffer[idx].storage (blob without XH00) */
  XPACK_ET_CONSTANT_BLOB = 2,            /* the blob's constant region (2024 exports) */
  XPACK_ET_CONSTANT_PTD = 3,             /* a .ptd entry, by named key */
  XPACK_ET_CONSTANT_PTE_NAMED_DATA = 4,  /* Program.named_data, by named key */
} xpack_et_constant_source;

/* "none", "legacy", "blob", "ptd", "pte named_data". Never NULL. */
const char* xpack_et_constant_source_name(xpack_et_constant_source source);

typedef struct xpack_et_constant {
  xpack_et_constant_source source;
  const uint8_t* data; /* into the mapped .pte/.ptd; NULL for NONE (and for a zero-size constant) */
  size_t size;
  const char* named_key; /* NULL for unnamed (in-blob or legacy) constants */
  size_t named_key_len;
  size_t ptd_index; /* which of the given .ptd files, for XPACK_ET_CONSTANT_PTD */
} xpack_et_constant;

/* Where named keys are looked up: the .ptd files first (in order), then the program's named_data.
 * Any member may be NULL/0. */
typedef struct xpack_et_named_sources {
  const xpack_et_program* program;
  const xpack_et_ptd* const* ptds;
  size_t ptd_count;
} xpack_et_named_sources;

/* Resolves constant index `idx` of `graph` in the documented order (see IDENTITY.md):
 * 0 -> NONE; blob without XH00 -> legacy constant_buffer[idx]; constant_data[idx] without named_key ->
 * constant region + offset; with named_key -> .ptd files, then program named_data.
 * A key in a .ptd and in the program's named_data is the .ptd's, as ExecuTorch reads it.
 * Errors: BAD_INPUT for an index past the tables, a region out of bounds, a key found in two
 * .ptd files or in none. Works for tensor constant_buffer_idx and
 * for the scale_buffer_idx of per-channel quantization alike. */
xpack_status xpack_et_xnn_resolve_constant(const xpack_et_xnn_graph* graph, uint32_t idx,
                                           const xpack_et_named_sources* sources, xpack_et_constant* out,
                                           xpack_error* err);

/* The identity a constant is known by in a cache; pack and run must agree on it.
 * A named key that names the content (64 lower-case hex digits of SHA-256, optionally "scale_"-prefixed,
 * as ExecuTorch's exporter writes them) -> the key verbatim, and the bytes are not read.
 * Any other named key -> "<key>#xxh3-128:<32 lower-case hex>:<size in decimal>": such names (module
 * paths, say) can stand for other bytes in another program, so the content hash joins the name.
 * No named key -> "xpack:xxh3-128:<32 lower-case hex>:<size in decimal>" of the bytes.
 * (XXH3_128bits with seed 0, canonical big-endian hex.)
 * Writes a NUL-terminated string to out (out_size bytes) and its length to *out_len (optional).
 * Errors: ARG when out is too small (named_key_len + XPACK_ET_IDENTITY_MAX is always enough) or a
 * required pointer is NULL (data may be NULL only for a content-named key or size 0). */
#define XPACK_ET_IDENTITY_MAX 96
xpack_status xpack_et_constant_identity(const uint8_t* data, size_t size, const char* named_key, size_t named_key_len,
                                        char* out, size_t out_size, size_t* out_len, xpack_error* err);

/* Whether xpack_et_constant_identity reads the bytes of a constant with this named key (NULL: none), i.e.
 * whether the key does not name the content. Reading them is what a cache costs beyond its look-ups for
 * such constants: every byte, also on a full hit (docs/BENCHMARKS.md). */
bool xpack_et_identity_reads_bytes(const char* named_key, size_t named_key_len);

/* As xpack_et_constant_identity for a constant resolved from sources (xpack_et_xnn_resolve_constant), with the
 * hash of its bytes remembered by the program or .ptd that holds them, for as long as that stays open: a
 * constant that several delegates or methods share (prefill and decode) is hashed once. Thread safe (pack
 * replays delegates in parallel). sources may be NULL (nothing remembered). Errors: as
 * xpack_et_constant_identity, ARG for a NULL constant or output. */
xpack_status xpack_et_constant_identity_of(const xpack_et_named_sources* sources, const xpack_et_constant* c,
                                           char* out, size_t out_size, size_t* out_len, xpack_error* err);

/* How XNNPACK packs a weight besides its bytes, which its weights-cache key does not tell apart (its seed is an
 * XOR of a few sizes and tiling numbers, equal for an FC of [8, 17] and one of [17, 8]): for every value whose
 * constant is these bytes, the value's datatype, dims and quantization (zero point and scale, channel dim, group
 * size, and its scales: their constant's identity, or their inline bytes), and for each fully-connected,
 * convolution, depthwise or transposed convolution node that packs it as its filter, the node's type, flags and
 * convolution parameters (all but its clamp) and its input's and output's datatypes, with their scale and zero
 * point when quantized statically (qint8, quint8: folded into the packed bias and requantization scales). A
 * weight's identity is its constant's followed by this suffix, so that the same bytes in another shape or node,
 * quantized otherwise, or under other activations, never share a cache entry (libpack/et/IDENTITY.md).
 * Writes into `suffix` (XPACK_ET_PACKING_SUFFIX_SIZE bytes) "|xnn:" and 32 lower-case hex digits (XXH3-128 of
 * those parameters), or "" for a constant no value of the graph uses. Sets *ambiguous (suffix "") when the values
 * and nodes that use the constant disagree: no single name fits its packings, and the caller binds
 * XPACK_IDENTITY_AMBIGUOUS instead (xpack_loader.h). The graph remembers the answer for the constant's bytes (every
 * value sharing them has the same suffix), so that naming all of a graph's weights costs O(uses) however many
 * values share one weight: later calls for those bytes return it, whatever `sources` they pass (pass the graph's
 * own every time). Safe from several threads on one graph. Errors: ARG (NULL argument), and those of resolving a
 * scale constant and of xpack_et_constant_identity_of (nothing is remembered then). */
#define XPACK_ET_PACKING_SUFFIX_PREFIX "|xnn:"
#define XPACK_ET_PACKING_SUFFIX_SIZE 38
xpack_status xpack_et_packing_suffix(const xpack_et_xnn_graph* graph, const xpack_et_named_sources* sources,
                                     uint32_t constant_idx, char* suffix, bool* ambiguous, xpack_error* err);

/* The identity constant c of graph (its index constant_idx) is bound with: xpack_et_constant_identity_of, then,
 * unless it is reached as scales, its packing suffix (xpack_et_packing_suffix). The replay and the summary (the
 * ExecuTorch adapter) both name weights through it. out_size counts the suffix (XPACK_ET_PACKING_SUFFIX_SIZE
 * bytes more than the constant's identity and its NUL need). *ambiguous as xpack_et_packing_suffix: bind XPACK_IDENTITY_AMBIGUOUS
 * then. Errors: those of the two. */
xpack_status xpack_et_weight_identity_of(const xpack_et_xnn_graph* graph, const xpack_et_named_sources* sources,
                                         uint32_t constant_idx, const xpack_et_constant* c, bool is_scale, char* out,
                                         size_t out_size, size_t* out_len, bool* ambiguous, xpack_error* err);

/* Asks the kernel now (MADV_WILLNEED, in large reads) for bytes [data, data + size) when they lie in a program or
 * .ptd of sources opened with XPACK_ET_OPEN_WEIGHTS_ON_DEMAND, which the caller is about to read although a cache
 * serves: a constant whose identity hashes its bytes, quantization scales. Read one page per fault there, cold,
 * they would cost a trip to storage each. Nothing for other addresses or files (read whole or read around). A hint:
 * returns at once, and what is read does not change. */
void xpack_et_read_ahead(const xpack_et_named_sources* sources, const void* data, size_t size);
/* Whether a program or .ptd of sources is read on demand, i.e. whether xpack_et_read_ahead can do anything for
 * it: callers skip collecting what to ask for when it cannot (programs read whole: small ones, or opened without
 * the flag). NULL: false. */
bool xpack_et_reads_on_demand(const xpack_et_named_sources* sources);

/* ============================================================================ inspection == */

typedef struct xpack_et_constant_summary {
  char* identity; /* owned by the summary */
  xpack_et_constant_source source;
  size_t size;
  uint32_t value_index;  /* first xvalue that uses it */
  bool is_scale;         /* reached through scale_buffer_idx */
  int16_t datatype;      /* of that value */
  const uint8_t* data;   /* the bytes, in the mapped .pte or .ptd */
  size_t ptd_index;      /* which .ptd of the sources, for XPACK_ET_CONSTANT_PTD */
  bool ambiguous;        /* a weight packed otherwise by the values or nodes that use it (xpack_et_packing_suffix):
                            identity then names the bytes alone, and binding must use XPACK_IDENTITY_AMBIGUOUS */
} xpack_et_constant_summary;

typedef struct xpack_et_delegate_summary {
  size_t method_index;
  size_t delegate_index;
  const char* method_name;
  const char* backend_id;
  bool is_xnnpack;
  xpack_et_location location;
  uint32_t location_index;
  size_t size;
  /* XNNPACK only: */
  bool has_header;
  char identifier[5];
  size_t value_count;
  size_t node_count;
  uint32_t node_type_counts[XPACK_ET_XNN_NODE_TYPE_MAX + 1]; /* by type code */
  uint32_t datatype_counts[XPACK_ET_XNN_DT_COUNT];          /* values by datatype */
  uint32_t unknown_datatypes;                               /* values whose datatype is outside 0..14 */
  xpack_et_constant_summary* constants;                     /* one per distinct constant index */
  size_t constant_count;
  uint64_t constant_bytes;
} xpack_et_delegate_summary;

typedef struct xpack_et_summary {
  size_t method_count;
  xpack_et_delegate_summary* delegates; /* all delegates of all methods, in order */
  size_t delegate_count;
  size_t xnnpack_delegate_count;
  size_t named_data_count;
  size_t segment_count;
} xpack_et_summary;

/* Parses every XNNPACK delegate of `program` and resolves all its constants through `sources`
 * (sources->program may be NULL: `program` is used). Non-XNNPACK delegates are listed, not parsed.
 * Same errors as the parse and resolve functions. Free with xpack_et_summary_free. */
xpack_status xpack_et_summarize(const xpack_et_program* program, const xpack_et_named_sources* sources,
                                xpack_et_summary** out, xpack_error* err);
void xpack_et_summary_free(xpack_et_summary* summary);

/* Fills the XNNPACK part of *d (header facts, node and datatype counts, every distinct constant resolved
 * through `sources`) from an already parsed graph; the other fields of *d are left as they are. On an error
 * (a constant that does not resolve, NOMEM) the counts are complete and the constants resolved so far are
 * kept. Free what it allocated with xpack_et_delegate_summary_clear. XPACK_ERR_ARG when graph or d is NULL. */
xpack_status xpack_et_summarize_graph(const xpack_et_xnn_graph* graph, const xpack_et_named_sources* sources,
                                      xpack_et_delegate_summary* d, xpack_error* err);
void xpack_et_delegate_summary_clear(xpack_et_delegate_summary* d);

/* Human-readable report (methods, delegates, node counts by type, datatypes, constants). When
 * `verbose`, one line per constant. program may be NULL (then the program's own lines are left out).
 * It flushes out before returning, so that a write stdio held back is checked too.
 * Errors: XPACK_ERR_ARG (summary or out NULL), XPACK_ERR_IO (writing to out failed). */
xpack_status xpack_et_summary_print(const xpack_et_summary* summary, const xpack_et_program* program, bool verbose,
                                    FILE* out, xpack_error* err);

#ifdef __cplusplus
}
#endif
#endif /* XPACK_EXECUTORCH_H */
