/* Model kinds the generator can write. Each fills a pte_program deterministically from the options. */
#ifndef XPACK_GEN_KINDS_H
#define XPACK_GEN_KINDS_H

#include <stdint.h>

#include "pte_writer.h"
#include "weights.h"

typedef struct gen_options {
  const char* kind;
  uint64_t size;   /* target weight bytes (llm kinds); 0 = default */
  uint32_t scale;  /* width multiplier (other kinds), size multiplier (llm kinds) */
  uint64_t seed;
  char variant;    /* 'A' default; other letters change only unshared tensors (the llm head) */
  int alias_decode;
  int name_keys; /* llm kinds: key weights by a module-path name, not by content */
  uint32_t delegates; /* llm kinds: XNNPACK delegates per method, each a slice of the layers; 0 = 1 */
  uint32_t group_size;
  uint32_t layers; /* llm kinds: layers (0: from the size); conv: extra 1x1 + depthwise blocks on 8x8 images */
  uint32_t repeat_calls; /* llm kinds: decode calls its first delegate this many times (one blob); 0 = once */
  uint32_t key_length; /* llm kinds with name_keys: every key padded at its front to this many bytes; 0 = as is */
} gen_options;

/* Weights live until the program is written; a pool keeps their addresses stable. */
typedef struct weight_pool {
  struct weight_block* head;
} weight_pool;

weight* pool_new(weight_pool* pool);
void pool_free(weight_pool* pool);

typedef int (*kind_build_fn)(const gen_options* o, weight_pool* pool, pte_program* p);

typedef struct kind_info {
  const char* name;
  kind_build_fn build;
  const char* summary;
} kind_info;

const kind_info* kind_find(const char* name);
const kind_info* kind_list(int* n);

int build_llm(const gen_options* o, weight_pool* pool, pte_program* p);
int build_llm_q4(const gen_options* o, weight_pool* pool, pte_program* p);
int build_conv(const gen_options* o, weight_pool* pool, pte_program* p);
int build_deconv(const gen_options* o, weight_pool* pool, pte_program* p);
int build_fp16(const gen_options* o, weight_pool* pool, pte_program* p);
int build_bf16(const gen_options* o, weight_pool* pool, pte_program* p);
int build_bmm(const gen_options* o, weight_pool* pool, pte_program* p);
int build_qd8_qc8w(const gen_options* o, weight_pool* pool, pte_program* p);
int build_mlp(const gen_options* o, weight_pool* pool, pte_program* p);
int build_shapes_a(const gen_options* o, weight_pool* pool, pte_program* p);
int build_shapes_b(const gen_options* o, weight_pool* pool, pte_program* p);
int build_shapes_tied(const gen_options* o, weight_pool* pool, pte_program* p);
int build_shapes_alias(const gen_options* o, weight_pool* pool, pte_program* p);
int build_shapes_alias_one(const gen_options* o, weight_pool* pool, pte_program* p);
int build_shapes_scale_alias(const gen_options* o, weight_pool* pool, pte_program* p);
int build_shapes_bias_a(const gen_options* o, weight_pool* pool, pte_program* p);
int build_shapes_bias_b(const gen_options* o, weight_pool* pool, pte_program* p);
int build_shapes_bias_two(const gen_options* o, weight_pool* pool, pte_program* p);

/* Seeds of tensors: a stable function of the run seed and the tensor's identity. */
uint64_t tensor_seed(uint64_t run_seed, uint32_t role, uint32_t index);

/* Adds a single-delegate method whose XNNPACK inputs/outputs are the method's inputs/outputs. */
int add_single_delegate_method(pte_program* p, const char* name, const xg_graph* g, int8_t scalar_type,
                               const uint32_t in_dims[][XG_MAX_DIMS], const uint32_t* in_ndims, int nin,
                               const uint32_t out_dims[][XG_MAX_DIMS], const uint32_t* out_ndims, int nout);

#endif
