/* reseed_cache IN.xpc OUT.xpc: writes OUT with IN's entries (identities, packed bytes, families) under
 * other seeds (seed ^ 1), through the writer as XNNPACK would record them. A cache whose weights are all
 * there under keys XNNPACK never asks for: what a cache packed by another XNNPACK, or for other operator
 * parameters, looks like to `xpack run` (tests/core/miss_reasons.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xpack.h"

static int die(const char* what, const xpack_error* err) {
  fprintf(stderr, "reseed_cache: %s%s%s\n", what, err ? ": " : "", err ? err->message : "");
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 3) return die("usage: reseed_cache IN.xpc OUT.xpc", NULL);
  if (xnn_initialize(NULL) != xnn_status_success) return die("xnn_initialize failed", NULL);
  xpack_error err;
  xpack_file* in;
  if (xpack_file_open(argv[1], &in, &err) != XPACK_OK) return die("cannot open IN", &err);
  xpack_file_info info;
  xpack_file_get_info(in, &info);
  xpack_writer* w;
  if (xpack_writer_create(argv[2], NULL, &w, &err) != XPACK_OK) return die("cannot create OUT", &err);
  struct xnn_weights_cache_provider* p = xpack_writer_provider(w);
  /* One stand-in raw pointer per entry for its kernel and one for its bias: the writer names them. */
  char* stand_ins = calloc(2 * (size_t)info.entry_count + 1, 1);
  if (stand_ins == NULL) return die("out of memory", NULL);
  for (uint64_t i = 0; i < info.entry_count; i++) {
    xpack_file_entry e;
    xpack_file_get_entry(in, i, &e);
    xpack_file_region r;
    xpack_file_get_region(in, e.region, &r);
    const uint8_t* bytes = xpack_file_region_bytes(in, e.region);
    xpack_file_family f;
    xpack_file_get_family(in, e.family, &f);
    xpack_family family;
    const void* kernel = &stand_ins[2 * i];
    const void* bias = e.bias ? &stand_ins[2 * i + 1] : NULL;
    if (bytes == NULL || r.size != r.stored_size) return die("IN is damaged or in the transport form", NULL);
    if (xpack_writer_bind(w, kernel, e.kernel, strlen(e.kernel), &err) != XPACK_OK ||
        (bias && xpack_writer_bind(w, bias, e.bias, strlen(e.bias), &err) != XPACK_OK) ||
        xpack_family_parse(f.name, strlen(f.name), &family, &err) != XPACK_OK ||
        xpack_writer_bind_family(w, kernel, &family, &err) != XPACK_OK) {
      return die("cannot bind an entry", &err);
    }
    const struct xnn_weights_cache_look_up_key key = {.seed = e.seed ^ 1u, .kernel = kernel, .bias = bias};
    if (p->look_up(p->context, &key) != SIZE_MAX) continue; /* already recorded (shared region) */
    void* space = p->reserve_space(p->context, (size_t)r.size);
    if (space == NULL) return die("reserve_space failed", NULL);
    memcpy(space, bytes, (size_t)r.size);
    if (p->look_up_or_insert(p->context, &key, space, (size_t)r.size) == SIZE_MAX) return die("insert failed", NULL);
  }
  if (xpack_writer_finish(w, &err) != XPACK_OK) return die("cannot finish OUT", &err);
  xpack_file_close(in);
  free(stand_ins);
  printf("reseed_cache: %llu entries under other seeds\n", (unsigned long long)info.entry_count);
  return 0;
}
