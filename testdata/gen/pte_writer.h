/* Assembles an ExecuTorch program (.pte) the way exir's serializer lays it out, and optionally the
 * FlatTensor (.ptd) holding its named weights:
 *   .pte = Program flatbuffer (ET12) with the eh00 header inserted at offset 8, padded to 128, then
 *          segments aligned to 128: [0] the (empty) constant segment, then unique delegate blobs,
 *          then one segment per unique named weight (when weights are not external).
 *   .ptd = FlatTensor flatbuffer (FT01) with the FH01 header inserted, then 16-aligned segments. */
#ifndef XPACK_GEN_PTE_WRITER_H
#define XPACK_GEN_PTE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "weights.h"
#include "xnn_graph.h"

/* ExecuTorch ScalarType numbers. */
enum { ST_LONG = 4, ST_HALF = 5, ST_FLOAT = 6, ST_BFLOAT16 = 15 };

#define PTE_MAX_VALUES 16
#define PTE_MAX_CALLS 512
#define PTE_MAX_METHODS 4

typedef struct pte_tensor {
  int8_t scalar_type;
  int32_t sizes[6];
  int ndims;
} pte_tensor;

typedef struct pte_call {
  uint8_t* blob; /* owned */
  size_t blob_size;
  int32_t args[PTE_MAX_VALUES];
  int nargs;
} pte_call;

typedef struct pte_method {
  char name[32];
  pte_tensor values[PTE_MAX_VALUES];
  int nvalues;
  int32_t inputs[PTE_MAX_VALUES], outputs[PTE_MAX_VALUES];
  int ninputs, noutputs;
  pte_call calls[PTE_MAX_CALLS];
  int ncalls;
} pte_method;

typedef struct pte_program {
  pte_method methods[PTE_MAX_METHODS];
  int nmethods;
  weight** named; /* unique by key, in order of first use */
  size_t nnamed, named_cap;
  int failed;
} pte_program;

void pte_init(pte_program* p);
void pte_free(pte_program* p);

pte_method* pte_add_method(pte_program* p, const char* name);
int pte_add_value(pte_method* m, int8_t scalar_type, const int32_t* sizes, int ndims);
void pte_method_io(pte_method* m, const int* inputs, int ninputs, const int* outputs, int noutputs);
/* Hashes the graph's weights, registers them as named data, serializes the blob and adds a
 * DelegateCall with the given value indices (inputs then outputs, the graph's external id order). */
int pte_add_delegate(pte_program* p, pte_method* m, const xg_graph* g, const int* args, int nargs);

/* Which FlatTensor layout write_ptd uses. PTD_LAYOUT_2025_04 is the schema between NamedData's addition
 * (2025-03) and the consolidation (2025-06): the early root (version, tensor_alignment, tensors, segments)
 * with named_data appended as field 4, NamedData holding only key and segment_index. An XNNPACK export of
 * that time (ExecuTorch 0.6) leaves tensors empty and puts every delegate weight in named_data. */
typedef enum ptd_layout { PTD_LAYOUT_2025_06 = 0, PTD_LAYOUT_2025_04 = 1 } ptd_layout;
void pte_set_ptd_layout(ptd_layout layout);

/* ptd_path == NULL: weights go into the .pte named_data. */
int pte_write(const pte_program* p, const char* pte_path, const char* ptd_path);

#endif
