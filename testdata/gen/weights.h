/* Constant tensors of the generated models: how their bytes are produced (deterministically, row by
 * row, so multi-gigabyte weights stream with bounded memory), their size and their named-data key. */
#ifndef XPACK_GEN_WEIGHTS_H
#define XPACK_GEN_WEIGHTS_H

#include <stdint.h>
#include <stdio.h>

typedef enum weight_format {
  WF_F32,       /* fp32, normal(0, stddev) */
  WF_F16,       /* IEEE half, normal(0, stddev) */
  WF_QC8,       /* int8 in [-127, 127] */
  WF_QC4,       /* int4 in [-8, 7] stored +8, two per byte, low nibble first, rows padded to even */
  WF_SCALE_F32, /* positive quantization scales around `stddev` */
  WF_SCALE_BF16,
  WF_BF16,      /* bfloat16 (round to nearest even), normal(0, stddev) */
} weight_format;

typedef struct weight {
  weight_format format;
  uint64_t seed;
  uint64_t rows, cols; /* logical elements = rows * cols */
  float stddev;
  int is_scale;   /* key gets the "scale_" prefix (see weights_set_scale_prefix) */
  char name[1104]; /* when set, the named-data key is this name instead of the content's SHA-256 (as
                     exporters that key tensors by module path do): same name, any bytes */
  /* filled by weight_hash */
  uint64_t nbytes;
  char key[1112];
  int hashed;
} weight;

void weight_set(weight* w, weight_format f, uint64_t seed, uint64_t rows, uint64_t cols, float stddev);
uint64_t weight_row_bytes(const weight* w);
/* Streams the bytes through SHA-256 and sets nbytes and key. Returns 0 on allocation failure. */
int weight_hash(weight* w);
/* Writes the bytes to f; returns 0 on I/O or allocation failure. */
int weight_write(const weight* w, FILE* f);
/* Produces the whole tensor in memory (for small tensors only); caller frees. */
uint8_t* weight_bytes(const weight* w);

/* ExecuTorch has written scale keys both as plain sha256 (seen in real 2025-11 files) and as
 * "scale_" + sha256 (the reference contract). Default: prefixed. */
void weights_set_scale_prefix(int on);

/* IEEE conversions with round-to-nearest-even. */
uint16_t f32_to_f16(float f);
uint16_t f32_to_bf16(float f);

#endif
