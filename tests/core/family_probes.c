/* Every packing family this xpack knows: its name parses back to it, its probe runs with this XNNPACK
 * (or fails with a message naming it), gives the same hash twice and in a second process (the caller
 * compares the printed lines of two runs), and families that XNNPACK packs with different kernels or
 * layouts get different hashes. Names outside the list, and every one-byte change of a known name that
 * is not itself a known name, do not parse.
 *
 *   family_probes            one line per family: "NAME probe HASH" or "NAME unprobeable MESSAGE"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "expect.h"
#include "loader/probe.h"
#include "xpack_family.h"


static const enum xnn_datatype kTypes[] = {xnn_datatype_invalid, xnn_datatype_fp32,  xnn_datatype_fp16, xnn_datatype_bf16,
                                           xnn_datatype_qdint8,  xnn_datatype_qint8,  xnn_datatype_quint8,
                                           xnn_datatype_qcint8,  xnn_datatype_qcint4, xnn_datatype_qbint4,
                                           xnn_datatype_qint32,  xnn_datatype_qcint32, xnn_datatype_qpint8};
#define NTYPES (sizeof kTypes / sizeof kTypes[0])

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

typedef struct seen {
  char name[XPACK_FAMILY_NAME_MAX];
  xpack_family family;
  uint64_t hash;
} seen;

/* Families that differ in more than the output datatype differ in what XNNPACK packs (filter type, bias,
 * block size, layout), so their probes must differ. The output datatype alone may select the same
 * packing (qd8 weights pack alike for fp32 and fp16 outputs). */
static int must_differ(const xpack_family* a, const xpack_family* b) {
  xpack_family x = *a, y = *b;
  x.output = y.output = xnn_datatype_invalid;
  /* XNNPACK without a bf16 kernel on this CPU (92a7ad50 built without AVX512-BF16) converts bf16 weights to fp32
   * and packs them as an fp32 layer: the bf16 probe's values are exact in both types, so it packs as the fp32
   * family's probe. A machine with the kernel packs it differently, which is what the probe is there to tell. */
  if (x.input == xnn_datatype_bf16 && x.filter == xnn_datatype_bf16) x.input = x.filter = xnn_datatype_fp32;
  if (y.input == xnn_datatype_bf16 && y.filter == xnn_datatype_bf16) y.input = y.filter = xnn_datatype_fp32;
  return memcmp(&x, &y, sizeof x) != 0;
}

int main(void) {
  if (xnn_initialize(NULL) != xnn_status_success) return 1;
  static seen probed[4096];
  size_t probed_count = 0, known = 0, unprobeable = 0;
  double slowest_us = 0;
  static const uint32_t blocks[] = {0, 32, 64};
  for (int op = XPACK_OP_FULLY_CONNECTED; op <= XPACK_OP_DEPTHWISE_CONVOLUTION_2D; op++)
    for (size_t a = 0; a < NTYPES; a++)
      for (size_t b = 0; b < NTYPES; b++)
        for (size_t c = 0; c < NTYPES; c++)
          for (size_t d = 0; d < NTYPES; d++)
            for (uint32_t t = 0; t < 2; t++)
              for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++) {
                xpack_family f = {(xpack_family_op)op, kTypes[a], kTypes[b], kTypes[c], kTypes[d], blocks[k], t};
                char name[XPACK_FAMILY_NAME_MAX];
                size_t len = 0;
                xpack_status st = xpack_family_format(&f, name, sizeof name, &len, NULL);
                xpack_family back;
                if (st != XPACK_OK) {
                  if (st == XPACK_ERR_UNSUPPORTED) {
                    EXPECT_MSG(xpack_family_parse(name, strlen(name), &back, NULL) != XPACK_OK, "unknown %s parsed", name);
                  }
                  continue;
                }
                known++;
                EXPECT_MSG(len == strlen(name) && xpack_family_parse(name, len, &back, NULL) == XPACK_OK &&
                           memcmp(&back, &f, sizeof f) == 0,
                       "%s does not parse back", name);
                /* every one-byte change of a known name is another known name or no name */
                for (size_t i = 0; i < len; i++) {
                  char bad[XPACK_FAMILY_NAME_MAX];
                  memcpy(bad, name, len + 1);
                  bad[i] ^= 0x01;
                  xpack_family g;
                  if (xpack_family_parse(bad, len, &g, NULL) == XPACK_OK) {
                    char again[XPACK_FAMILY_NAME_MAX];
                    EXPECT_MSG(xpack_family_format(&g, again, sizeof again, NULL, NULL) == XPACK_OK && strcmp(again, bad) == 0,
                               "%s parsed as another spelling", bad);
                  }
                }
                xp_probe_result r1 = {0, 0}, r2 = {0, 0};
                xpack_error err;
                double t0 = now_us();
                st = xp_probe_run(&f, &r1, &err);
                const uint64_t h1 = r1.hash;
                double us = now_us() - t0;
                if (us > slowest_us) slowest_us = us;
                if (st != XPACK_OK) {
                  unprobeable++;
                  EXPECT_MSG(strstr(err.message, name) != NULL, "probe message does not name %s: %s", name, err.message);
                  printf("%s unprobeable %s\n", name, err.message);
                  continue;
                }
                EXPECT_MSG(xp_probe_run(&f, &r2, &err) == XPACK_OK && r1.hash == r2.hash && r1.keys == r2.keys,
                           "%s: probe not deterministic", name);
                EXPECT_MSG(r1.keys != 0, "%s: probe keys 0, which a file reads as not recorded", name);
                xp_probe_result memo = {0, 0};
                EXPECT_MSG(xp_probe_family(name, len, &memo, &err) == XPACK_OK && memo.hash == h1 && memo.keys == r1.keys,
                           "%s: memo differs", name);
                printf("%s probe %016llx\n", name, (unsigned long long)h1);
                if (probed_count < sizeof probed / sizeof probed[0]) {
                  snprintf(probed[probed_count].name, XPACK_FAMILY_NAME_MAX, "%s", name);
                  probed[probed_count].family = f;
                  probed[probed_count++].hash = h1;
                }
              }
  for (size_t i = 0; i < probed_count; i++) {
    for (size_t j = i + 1; j < probed_count; j++) {
      if (!must_differ(&probed[i].family, &probed[j].family)) continue;
      EXPECT_MSG(probed[i].hash != probed[j].hash, "%s and %s have the same probe", probed[i].name, probed[j].name);
    }
  }
  static const char* const kNotFamilies[] = {
      "", "fully_connected", "fully_connected in=f32 w=f32 b=f32 out=f32",  /* transpose missing */
      "fully_connected in=f32 w=f32 b=f32 out=f32 transpose=0 ",           /* trailing space */
      "fully_connected  in=f32 w=f32 b=f32 out=f32 transpose=0",           /* two spaces */
      "fully_connected in=f32 w=f32 b=f32 out=f32 transpose=2",
      "fully_connected in=f32 w=qb4w b=f32 out=f32 transpose=0",           /* UNREACHABLE in XNNPACK */
      "fully_connected in=qd8 w=qb4w block=33 b=f32 out=f32 transpose=0",
      "fully_connected in=qd8 w=qb4w block=032 b=f32 out=f32 transpose=0",
      "convolution_2d in=f16 w=f16 b=f16 out=f16",                          /* UNREACHABLE in XNNPACK */
      "convolution_2d in=f32 w=f32 b=f32 out=f32 transpose=0",
      "batch_matrix_multiply in=f32 w=f32 b=none out=f32",
  };
  for (size_t i = 0; i < sizeof kNotFamilies / sizeof kNotFamilies[0]; i++) {
    xpack_family g;
    EXPECT_MSG(xpack_family_parse(kNotFamilies[i], strlen(kNotFamilies[i]), &g, NULL) != XPACK_OK, "'%s' parsed",
               kNotFamilies[i]);
    xp_probe_result h;
    xpack_error err;
    EXPECT_MSG(xp_probe_family(kNotFamilies[i], strlen(kNotFamilies[i]), &h, &err) == XPACK_ERR_UNSUPPORTED,
               "'%s' probed", kNotFamilies[i]);
  }
  fprintf(stderr, "families: %zu known, %zu probed, %zu unprobeable here; slowest probe %.0f us\n", known,
          probed_count, unprobeable, slowest_us);
  EXPECT_MSG(probed_count > 0, "no family could be probed");
  return failures ? 1 : 0;
}
