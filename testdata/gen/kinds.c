#include "kinds.h"

#include <stdlib.h>
#include <string.h>

#include "rng.h"

#define POOL_BLOCK 256

struct weight_block {
  struct weight_block* next;
  int used;
  weight items[POOL_BLOCK];
};

weight* pool_new(weight_pool* pool) {
  if (!pool->head || pool->head->used == POOL_BLOCK) {
    struct weight_block* b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->next = pool->head;
    pool->head = b;
  }
  return &pool->head->items[pool->head->used++];
}

void pool_free(weight_pool* pool) {
  while (pool->head) {
    struct weight_block* n = pool->head->next;
    free(pool->head);
    pool->head = n;
  }
}

uint64_t tensor_seed(uint64_t run_seed, uint32_t role, uint32_t index) {
  return seed_mix(seed_mix(run_seed, role), index);
}

int add_single_delegate_method(pte_program* p, const char* name, const xg_graph* g, int8_t scalar_type,
                               const uint32_t in_dims[][XG_MAX_DIMS], const uint32_t* in_ndims, int nin,
                               const uint32_t out_dims[][XG_MAX_DIMS], const uint32_t* out_ndims, int nout) {
  pte_method* m = pte_add_method(p, name);
  if (!m) return 0;
  int ins[PTE_MAX_VALUES], outs[PTE_MAX_VALUES], args[PTE_MAX_VALUES];
  for (int i = 0; i < nin + nout; i++) {
    int is_in = i < nin;
    const uint32_t* d = is_in ? in_dims[i] : out_dims[i - nin];
    uint32_t nd = is_in ? in_ndims[i] : out_ndims[i - nin];
    int32_t sizes[XG_MAX_DIMS];
    for (uint32_t k = 0; k < nd; k++) sizes[k] = (int32_t)d[k];
    int v = pte_add_value(m, scalar_type, sizes, (int)nd);
    if (v < 0) return 0;
    if (is_in) ins[i] = v;
    else outs[i - nin] = v;
    args[i] = v;
  }
  pte_method_io(m, ins, nin, outs, nout);
  return pte_add_delegate(p, m, g, args, nin + nout);
}

static const kind_info k_kinds[] = {
    {"llm", build_llm,
     "methods prefill (T=8) and decode (T=1) sharing fp32 FullyConnected weights by named key; --size sets "
     "total weight bytes (default 2M), --variant B changes only the head, --alias-decode adds a method whose "
     "blob is byte-identical to decode's"},
    {"llm-q4", build_llm_q4,
     "like llm with dynamically quantized activations (Convert fp32->qdint8 per token) and 4-bit weights: "
     "even layers qcint4 per channel (fp32 scales), odd layers qbint4 blockwise (bf16 scales, --group-size, "
     "default 32), head qcint4"},
    {"qd8-qc8w", build_qd8_qc8w, "two dynamically quantized FullyConnected layers with qcint8 per-channel weights"},
    {"fp16", build_fp16, "two fp16 FullyConnected layers (fp16 activations, weights and bias)"},
    {"bf16", build_bf16,
     "two bf16 FullyConnected layers (bf16 activations and weights, fp32 bias: XNNPACK's bf16 fully-connected "
     "takes no other); ExecuTorch main defines each layer into fp32 converted to bf16"},
    {"deconv", build_deconv, "NCHW model: StaticTranspose, two ConvTranspose2d (stride 2), StaticTranspose"},
    {"bmm", build_bmm, "BatchMatrixMultiply with a constant second operand and with two dynamic inputs, then Add"},
    {"ptd", build_mlp, "fp32 MLP (3 FullyConnected with bias) whose weights live in a .ptd beside the .pte"},
    {"conv", build_conv, "small NCHW CNN: Conv2d, DepthwiseConv2d, GlobalAvgPooling2d, StaticReshape, FullyConnected"},
    {"shapes-a", build_shapes_a,
     "fp32 FC [8, 17], Conv2d 2x2 16->34 with bias, Conv2d 1x1 3->16: each weight's bytes are shapes-b's in "
     "another shape with the same XNNPACK seed"},
    {"shapes-b", build_shapes_b, "shapes-a's weight bytes as FC [17, 8], Conv2d 1x2 64->34 in 2 groups, FC [24, 2]"},
    {"shapes-tied", build_shapes_tied, "one weight's bytes in two FC nodes, [8, 17] and [17, 8]"},
    {"shapes-alias", build_shapes_alias,
     "shapes-tied keyed by module path (fc0.weight, fc1.weight): two keys naming one segment, one pointer"},
    {"shapes-alias-one", build_shapes_alias_one, "shapes-alias's fc1.weight alone, as FC [17, 8]"},
    {"shapes-scale-alias", build_shapes_scale_alias,
     "FC [8, 17] and [17, 8] over floats that are also a qd8 x qc8w FC's per-channel scales (one key)"},
    {"shapes-bias-a", build_shapes_bias_a, "FC [8, 17] whose bias bytes are also an FC [2, 4]'s weight"},
    {"shapes-bias-b", build_shapes_bias_b, "shapes-bias-a with other bias bytes"},
    {"shapes-bias-two", build_shapes_bias_two,
     "one FC [8, 17] weight with shapes-bias-a's and shapes-bias-b's biases, each also an FC [2, 4]'s weight"},
};

const kind_info* kind_find(const char* name) {
  for (size_t i = 0; i < sizeof k_kinds / sizeof k_kinds[0]; i++)
    if (strcmp(k_kinds[i].name, name) == 0) return &k_kinds[i];
  return NULL;
}

const kind_info* kind_list(int* n) {
  *n = (int)(sizeof k_kinds / sizeof k_kinds[0]);
  return k_kinds;
}
