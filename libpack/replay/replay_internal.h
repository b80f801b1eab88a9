/* State shared by the replay of values (replay_values.c) and nodes (replay_nodes.c). */
#ifndef XPACK_REPLAY_INTERNAL_H
#define XPACK_REPLAY_INTERNAL_H

#include "xpack_replay.h"

typedef struct xp_replay_scratch {
  struct xp_replay_scratch* next;
  _Alignas(16) unsigned char data[];
} xp_replay_scratch;

/* What the replay knows of each defined XNNPACK value (by XNNPACK id): enough to name node families. */
typedef struct xp_replay_value_info {
  enum xnn_datatype datatype;
  const void* data;    /* static data, or NULL */
  uint32_t block_size; /* blockwise-quantized values */
} xp_replay_value_info;

typedef struct xp_replay_id_pair {
  uint32_t serialized; /* id_out */
  uint32_t defined;    /* XNNPACK's id */
} xp_replay_id_pair;

/* A value's shape as XNNPACK will give it at reshape (replay_shapes.c). */
typedef struct xp_replay_shape {
  uint8_t known;
  uint8_t num_dims;
  uint32_t dims[XNN_MAX_TENSOR_DIMS];
} xp_replay_shape;

/* The identity a weight pointer of the delegate is bound to (replay_bindings.c); identity NULL: ambiguous. */
typedef struct xp_replay_bound {
  const void* ptr; /* NULL: an empty slot */
  char* identity;
  size_t len;
} xp_replay_bound;

typedef struct xp_replay_bindings {
  xp_replay_bound* slots; /* open addressing by pointer, capacity a power of two, at most half full */
  size_t capacity, count;
} xp_replay_bindings;

typedef struct xp_replay_state {
  const xpack_et_xnn_graph* graph;
  const xpack_et_named_sources* sources;
  xpack_bind_fn bind;
  void* bind_context;
  xnn_subgraph_t subgraph;
  xp_replay_id_pair* ids;
  size_t id_count, id_capacity;
  int ids_sorted;
  xpack_replay_external* externals;
  uint32_t num_externals;
  xp_replay_value_info* value_info; /* indexed by XNNPACK id */
  size_t value_info_capacity;
  xpack_replay_weight_family* families;
  size_t family_count, family_capacity;
  xp_replay_scratch* scratch;
  unsigned char* value_use; /* by value index: RP_VALUE_* bits (xp_replay_find_value_uses, xp_replay_check_node_ids) */
  int16_t* converted_from;   /* by value index: the datatype a Convert node makes it from, or 0 (xp_replay_find_value_uses) */
  xp_replay_shape* shapes;   /* by value index: what XNNPACK's reshape will make of it, where known (replay_shapes.c) */
  xp_replay_bindings bound;  /* what each weight pointer is bound to so far (xp_replay_bind) */
  size_t unnamed_long;       /* weight pointers whose identity is longer than any binding takes, each counted once */
  uint64_t growth;           /* bytes computed values take beyond their declared dims, in all (replay_shapes.c) */
  uint32_t grown_value;      /* the value that grows most, with its computed and declared sizes (growth > 0) */
  uint64_t grown_bytes, grown_declared_bytes;
} xp_replay_state;

/* Binds ptr through s->bind: to identity the first time, and to XPACK_IDENTITY_AMBIGUOUS once another constant
 * of the delegate names the same pointer otherwise (XNNPACK's key holds the pointer: one pointer, one name).
 * Errors: XPACK_ERR_NOMEM (nothing bound). */
xpack_status xp_replay_bind(xp_replay_state* s, const void* ptr, const char* identity, size_t len);
/* Whether ptr was bound before in this replay (to whatever identity). */
bool xp_replay_bound_before(const xp_replay_state* s, const void* ptr);
/* Whether cache (an xpack_cache) holds entries of family and serves them on this machine (deciding it now). */
bool xp_replay_cache_serves(void* cache, const xpack_family* family);
void xp_replay_bindings_free(xp_replay_bindings* t);

enum {
  RP_VALUE_LISTED_INPUT = 1,  /* in the graph's input_ids */
  RP_VALUE_LISTED_OUTPUT = 2, /* in output_ids */
  RP_VALUE_CONSUMED = 4,      /* some node reads it */
  RP_VALUE_PRODUCED = 8,      /* a node defined so far writes it */
};

void* xp_replay_scratch_alloc(xp_replay_state* s, size_t bytes);
/* One fp32 blockwise scale as ExecuTorch's XNNPACK backend turns it into bf16 (replay_values.c). */
uint16_t xp_replay_bf16_as_executorch(float f);
enum xnn_datatype xp_replay_datatype(int serialized);
/* Bits per element of a serialized XNNDatatype, as the run buffers are sized. */
size_t xp_replay_element_bits(int serialized);
/* The bytes XNNPACK reads or writes for a tensor of these dims and serialized datatype: elements times bits,
 * rounded up to bytes, and for a 4-bit datatype every row (the last dim) rounded up to whole bytes.
 * UINT64_MAX when the elements pass 2^58 (their product cannot be trusted to fit). */
uint64_t xp_replay_tensor_bytes(const uint32_t* dims, uint32_t num_dims, int serialized);
/* No tensor is larger: more than a 47-bit address space (a process on x86-64 or arm64) holds, or a quarter of a
 * smaller size_t. Below it, XNNPACK's own products and sums of tensor sizes cannot wrap. */
#define XP_REPLAY_MAX_TENSOR_BYTES \
  ((uint64_t)SIZE_MAX / 4 < (UINT64_C(1) << 47) ? (uint64_t)SIZE_MAX / 4 : (UINT64_C(1) << 47))
xpack_status xp_replay_map_id(xp_replay_state* s, uint32_t serialized, uint32_t defined, xpack_error* err);
/* Remembers what XNNPACK value `id` is. Returns XPACK_OK or XPACK_ERR_NOMEM. */
xpack_status xp_replay_note_value(xp_replay_state* s, uint32_t id, enum xnn_datatype datatype, const void* data, uint32_t block_size);
/* Records the family of a weight-packing node defined with XNNPACK ids (bias may be invalid). */
xpack_status xp_replay_note_family(xp_replay_state* s, xpack_family_op op, uint32_t node, uint32_t input, uint32_t filter,
                                   uint32_t bias, uint32_t output, uint32_t flags);
/* XNNPACK's id for a serialized id; XNN_INVALID_VALUE_ID stays invalid. Returns 0, or -1 if unknown. */
int xp_replay_lookup_id(xp_replay_state* s, uint32_t serialized, uint32_t* defined);
/* Semantic checks before a value or a convolution or fully-connected node reaches XNNPACK (replay_checks.c): XPACK_ERR_BAD_INPUT
 * naming the value or node and what was expected. */
xpack_status xp_replay_check_value(const xp_replay_state* s, const xpack_et_xnn_value* value, xpack_error* err);
xpack_status xp_replay_check_constant_size(const xp_replay_state* s, const xpack_et_xnn_value* value, size_t constant_size,
                                           xpack_error* err);
xpack_status xp_replay_check_conv(const xp_replay_state* s, const xpack_et_xnn_node* node, xpack_error* err);
/* A window node's paddings against the input shape XNNPACK will give it (replay_window_checks.c): a deconvolution's
 * output at least max(1, stride - 1); over XNNPACK 4ea82e5 and 1adaa7c7, TensorFlow SAME padding not below 0.
 * BAD_INPUT. */
xpack_status xp_replay_check_window(const xp_replay_state* s, const xpack_et_xnn_node* node, xpack_error* err);
xpack_status xp_replay_check_fully_connected(const xp_replay_state* s, const xpack_et_xnn_node* node, xpack_error* err);
/* Allocates s->value_use and s->converted_from and marks what input_ids, output_ids and the nodes' inputs
 * say of each value. XPACK_ERR_NOMEM only. */
xpack_status xp_replay_find_value_uses(xp_replay_state* s, xpack_error* err);
/* Every external value has an external id of its own. */
xpack_status xp_replay_check_external_ids(const xp_replay_state* s, xpack_error* err);
/* The values a node reads and writes (replay_checks.c says which); marks its outputs as produced. */
xpack_status xp_replay_check_node_ids(xp_replay_state* s, const xpack_et_xnn_node* node, xpack_error* err);
xpack_status xp_replay_check_elementwise(const xp_replay_state* s, const xpack_et_xnn_node* node, xpack_error* err);
/* No flag bits XNNPACK keeps for itself; fp32-static-weight flags only on fp32 weights. */
xpack_status xp_replay_check_flags(const xp_replay_state* s, const xpack_et_xnn_node* node, xpack_error* err);
/* A fully-connected or batch-matrix-multiply input quantized at run time comes from the node's output type. */
xpack_status xp_replay_check_dynamic_quant(const xp_replay_state* s, const xpack_et_xnn_node* node, xpack_error* err);
/* The scales a quantized value was defined with: per-channel floats or blockwise bf16, `count` of them. */
typedef struct xp_replay_quant_scales {
  const float* channel;
  const uint16_t* block;
  size_t count;
} xp_replay_quant_scales;
/* After XNNPACK refused to define the value v as `datatype` with an invalid parameter: XPACK_ERR_BAD_INPUT naming
 * the zero point outside its datatype's range, or the first scale that is not a positive, normal float (its
 * index and value), as XNNPACK's define checks them (replay_quant_checks.c); XPACK_OK when neither is at fault. */
xpack_status xp_replay_explain_quant_refusal(const char* graph, const xpack_et_xnn_value* v, enum xnn_datatype datatype,
                                             const xp_replay_quant_scales* given, xpack_error* err);
/* What an xnn_define_* refusal is: invalid or unsupported parameters come from the file's graph
 * (XPACK_ERR_BAD_INPUT), lack of memory is XPACK_ERR_NOMEM, anything else (XNNPACK not initialized, this
 * hardware) is XPACK_ERR_XNNPACK. (replay_checks.c) */
xpack_status xp_replay_define_refusal(enum xnn_status refusal);
/* Every check of the graph's values (uses, external ids, each value), in the order the replay makes them. */
xpack_status xp_replay_check_graph_values(xp_replay_state* s, xpack_error* err);
/* Every check of one node before it is defined; nodes are checked in graph order (a node may read only what
 * an earlier node or the graph's inputs and constants provide). */
xpack_status xp_replay_check_node(xp_replay_state* s, const xpack_et_xnn_node* node, xpack_error* err);
/* The shapes XNNPACK gives values at reshape (replay_shapes.c). init: external inputs and constants as declared,
 * every computed value unknown (XPACK_ERR_NOMEM only); note_node: the outputs of a node, from its inputs' shapes;
 * shape_of: NULL when unknown. */
xpack_status xp_replay_shapes_init(xp_replay_state* s, xpack_error* err);
void xp_replay_shapes_note_node(xp_replay_state* s, const xpack_et_xnn_node* node);
const xp_replay_shape* xp_replay_shape_of(const xp_replay_state* s, uint32_t serialized);
/* The shape XNNPACK's reshape gives node n's output (*output: its serialized id; XNN_INVALID_VALUE_ID for a node
 * without one) from the shapes of its inputs: 1 and *out, or 0 when an input is unknown or XNNPACK's reshape
 * would refuse them (replay_shape_rules.c). An argmax pooling's index output takes the shape of its value output. */
int xp_replay_node_output_shape(const xp_replay_state* s, const xpack_et_xnn_node* n, uint32_t* output,
                                xp_replay_shape* out);
/* XNNPACK's output size of a deconvolution along one dim: stride x (in - 1) + adjustment + dilated kernel, less
 * the padding, and 0 when the padding takes it all. */
uint64_t xp_replay_deconv_output(uint64_t in, uint64_t padding, uint64_t adjustment, uint64_t kernel, uint64_t dilation,
                                 uint64_t stride);
/* Whether stride x (count - 1) + rest (count 0 taken as 1) is at most `max` (SIZE_MAX: what XNNPACK's size_t
 * arithmetic holds in this process), computed without wrapping. */
int xp_replay_extent_fits(uint64_t stride, uint64_t count, uint64_t rest, uint64_t max);
/* The extent of a window of `kernel` taps `dilation` apart (XNNPACK's effective kernel); 0 for no taps. */
uint64_t xp_replay_window_extent(uint64_t kernel, uint64_t dilation);
/* A 2-D window node (convolution, depthwise, deconvolution, max, average and argmax pooling) as XNNPACK's reshape
 * reads it, along height [0] and width [1] (replay_shape_rules.c). */
typedef struct xp_replay_window {
  uint32_t input_id, output_id; /* serialized ids; argmax pooling: its value output */
  int deconv, same_padding, argmax; /* argmax: XNNPACK's argmax pooling, whose stride is its window */
  uint64_t padding[2], kernel[2], stride[2], dilation[2], adjustment[2];
  uint64_t channels; /* of the output; 0: the input's */
} xp_replay_window;
/* 1 and *w for a window node, 0 for any other node. */
int xp_replay_window_of(const xpack_et_xnn_node* n, xp_replay_window* w);
/* XNNPACK's output size along d over an input of `in` (the window's stride and kernel along d not 0). */
uint64_t xp_replay_window_dim(const xp_replay_window* w, int d, uint64_t in);

void xp_replay_free_scratch(xp_replay_scratch* block);
/* Frees the look-up tables a replay builds while it checks and defines (ids, value info and uses). */
void xp_replay_free_tables(xp_replay_state* s);
xpack_status xp_replay_define_value(xp_replay_state* s, const xpack_et_xnn_value* value, xpack_error* err);
/* Identities that do not come from a content-naming key hash every byte of their constant, also when the cache
 * then serves every weight, and quantization scales are read by the definition, served or not. A program opened
 * with weights on demand (MADV_RANDOM) would read those bytes one page per fault, cold: this asks for all of them
 * (MADV_WILLNEED) before the first is read, so that they come in large reads. A hint. (replay_read_ahead.c) */
void xp_replay_read_ahead(const xp_replay_state* s);
xpack_status xp_replay_define_node(xp_replay_state* s, const xpack_et_xnn_node* node, xpack_error* err);

#endif
