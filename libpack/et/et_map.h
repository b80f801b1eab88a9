/* Read-only file mappings for model inputs: weights are served from the mapping, never copied. */
#ifndef XPACK_ET_MAP_H
#define XPACK_ET_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "xpack_status.h"

typedef struct xp_et_map {
  const uint8_t* data; /* NULL for an empty file */
  size_t size;
  void* mapping;       /* what xp_et_map_release unmaps (xp_unmap_file); NULL when borrowed or empty */
  size_t mapping_size;
  int read_on_demand;  /* advised MADV_RANDOM (XPACK_ET_OPEN_WEIGHTS_ON_DEMAND): xpack_et_read_ahead applies */
} xp_et_map;

/* Maps `path` read-only (xp_map_file: MAP_SHARED). An empty file gives data == NULL, size == 0. Errors: IO. */
xpack_status xp_et_map_file(const char* path, xp_et_map* out, xpack_error* err);
void xp_et_map_release(xp_et_map* map);
/* Whether bytes [data, data + size) lie within map's bytes. */
int xp_et_map_holds(const xp_et_map* map, const uint8_t* data, size_t size);

/* Keys compared as bytes (ExecuTorch's rule), shorter first on a common prefix; for sorting. */
int xp_et_key_compare(const char* a, size_t a_len, const char* b, size_t b_len);

/* strdup that reports failure as NULL (callers turn it into XPACK_ERR_NOMEM). */
char* xp_et_strdup(const char* s);

#endif
