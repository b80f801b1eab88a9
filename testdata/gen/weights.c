#include "weights.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/le.h"
#include "rng.h"
#include "sha256.h"

static int g_scale_prefix = 1;
void weights_set_scale_prefix(int on) { g_scale_prefix = on; }

uint16_t f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

uint16_t f32_to_f16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000;
  uint32_t abs = u & 0x7fffffff;
  if (abs >= 0x7f800000) return (uint16_t)(sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 : 0));
  if (abs >= 0x477ff000) return (uint16_t)(sign | 0x7c00); /* rounds to >= 65520: inf */
  if (abs < 0x38800000) {                                /* subnormal half (or zero) */
    if (abs < 0x33000000) return (uint16_t)sign;
    uint32_t mant = (abs & 0x7fffff) | 0x800000;
    int shift = 113 - (int)(abs >> 23) + 13; /* 126 - exp + 14 - 1 ... keeps 10 bits */
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t h = ((abs - 0x38000000) >> 13);
  uint32_t rem = abs & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
  return (uint16_t)(sign | h);
}

void weight_set(weight* w, weight_format f, uint64_t seed, uint64_t rows, uint64_t cols, float stddev) {
  memset(w, 0, sizeof *w);
  w->format = f;
  w->seed = seed;
  w->rows = rows;
  w->cols = cols;
  w->stddev = stddev;
  w->is_scale = (f == WF_SCALE_F32 || f == WF_SCALE_BF16);
}

uint64_t weight_row_bytes(const weight* w) {
  switch (w->format) {
    case WF_F32:
    case WF_SCALE_F32: return w->cols * 4;
    case WF_F16:
    case WF_BF16:
    case WF_SCALE_BF16: return w->cols * 2;
    case WF_QC8: return w->cols;
    case WF_QC4: return (w->cols + 1) / 2;
  }
  return 0;
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Quantized values follow a rounded normal, like real weights after scale fitting. */
static int quantized(rng* r, float spread, int lo, int hi) {
  return clampi((int)lrintf(rng_normal(r) * spread), lo, hi);
}

static const uint8_t k_popcount8[256] = {
#define B2(n) n, n + 1, n + 1, n + 2
#define B4(n) B2(n), B2(n + 1), B2(n + 1), B2(n + 2)
#define B6(n) B4(n), B4(n + 1), B4(n + 1), B4(n + 2)
    B6(0), B6(1), B6(1), B6(2)
#undef B2
#undef B4
#undef B6
};

/* Stored int4 code (value + 8) from 16 random bits. */
static unsigned int4_code(uint16_t bits) {
  unsigned c = k_popcount8[bits & 0xff] + k_popcount8[bits >> 8]; /* value + 8, in [0, 16] */
  return c > 15 ? 15 : c;
}

/* Scales are positive, within [0.5, 1.5) x the nominal scale. */
static float scale_value(rng* r, float nominal) { return nominal * (0.5f + rng_unit(r)); }

static void gen_row(const weight* w, rng* r, uint8_t* out) {
  uint64_t n = w->cols;
  switch (w->format) {
    case WF_F32:
      for (uint64_t i = 0; i < n; i++) xp_putf32(out + 4 * i, rng_normal(r) * w->stddev);
      break;
    case WF_SCALE_F32:
      for (uint64_t i = 0; i < n; i++) xp_putf32(out + 4 * i, scale_value(r, w->stddev));
      break;
    case WF_F16:
      for (uint64_t i = 0; i < n; i++) xp_put16(out + 2 * i, f32_to_f16(rng_normal(r) * w->stddev));
      break;
    case WF_SCALE_BF16:
      for (uint64_t i = 0; i < n; i++) xp_put16(out + 2 * i, f32_to_bf16(scale_value(r, w->stddev)));
      break;
    case WF_BF16:
      for (uint64_t i = 0; i < n; i++) xp_put16(out + 2 * i, f32_to_bf16(rng_normal(r) * w->stddev));
      break;
    case WF_QC8:
      for (uint64_t i = 0; i < n; i++) out[i] = (uint8_t)(int8_t)quantized(r, 40.0f, -127, 127);
      break;
    case WF_QC4:
      /* int4 values as (set bits in 16 random bits) - 8: binomial, spread 2, clamped to [-8, 7].
       * Cheap enough that gigabytes of 4-bit weights generate at disk speed. */
      for (uint64_t i = 0; i < n; i += 8) {
        uint64_t bits[2] = {rng_next(r), rng_next(r)};
        for (uint64_t j = 0; j < 8 && i + j < n; j += 2) {
          uint64_t word = bits[j / 4];
          unsigned shift = (unsigned)(j % 4) * 16;
          unsigned lo = int4_code((uint16_t)(word >> shift));
          unsigned hi = i + j + 1 < n ? int4_code((uint16_t)(word >> (shift + 16))) : 8u; /* pad value 0 */
          out[(i + j) / 2] = (uint8_t)(lo | (hi << 4));
        }
      }
      break;
  }
}

typedef int (*sink_fn)(void* ctx, const uint8_t* p, size_t n);

/* Rows are generated into a chunk of about 1 MiB before handing them to the sink. */
static int weight_stream(const weight* w, sink_fn sink, void* ctx) {
  uint64_t row = weight_row_bytes(w);
  uint64_t rows_per_chunk = row ? (1u << 20) / row : 1;
  if (rows_per_chunk == 0) rows_per_chunk = 1;
  uint8_t* chunk = malloc((size_t)(rows_per_chunk * row) + 1);
  if (!chunk) return 0;
  rng r;
  rng_init(&r, w->seed);
  int ok = 1;
  for (uint64_t done = 0; ok && done < w->rows;) {
    uint64_t k = w->rows - done < rows_per_chunk ? w->rows - done : rows_per_chunk;
    for (uint64_t i = 0; i < k; i++) gen_row(w, &r, chunk + i * row);
    ok = sink(ctx, chunk, (size_t)(k * row));
    done += k;
  }
  free(chunk);
  return ok;
}

static int sink_hash(void* ctx, const uint8_t* p, size_t n) {
  sha256_update(ctx, p, n);
  return 1;
}

int weight_hash(weight* w) {
  sha256_ctx c;
  sha256_init(&c);
  if (!weight_stream(w, sink_hash, &c)) return 0;
  uint8_t d[32];
  sha256_final(&c, d);
  char hex[65];
  sha256_hex(d, hex);
  if (w->name[0]) snprintf(w->key, sizeof w->key, "%s", w->name);
  else snprintf(w->key, sizeof w->key, "%s%s", (w->is_scale && g_scale_prefix) ? "scale_" : "", hex);
  w->nbytes = w->rows * weight_row_bytes(w);
  w->hashed = 1;
  return 1;
}

static int sink_file(void* ctx, const uint8_t* p, size_t n) { return fwrite(p, 1, n, ctx) == n; }

int weight_write(const weight* w, FILE* f) { return weight_stream(w, sink_file, f); }

typedef struct mem_sink {
  uint8_t* p;
  size_t at;
} mem_sink;

static int sink_mem(void* ctx, const uint8_t* p, size_t n) {
  mem_sink* m = ctx;
  memcpy(m->p + m->at, p, n);
  m->at += n;
  return 1;
}

uint8_t* weight_bytes(const weight* w) {
  mem_sink m = {malloc((size_t)(w->rows * weight_row_bytes(w)) + 1), 0};
  if (!m.p) return NULL;
  if (!weight_stream(w, sink_mem, &m)) {
    free(m.p);
    return NULL;
  }
  return m.p;
}
