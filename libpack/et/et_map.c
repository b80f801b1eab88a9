#include "et/et_map.h"

#include <stdlib.h>
#include <string.h>

#include "common/file_map.h"

xpack_status xp_et_map_file(const char* path, xp_et_map* out, xpack_error* err) {
  memset(out, 0, sizeof *out);
  xp_file_map map;
  xpack_status st = xp_map_file(path, &map, err);
  if (st != XPACK_OK) return st;
  out->data = map.data;
  out->size = (size_t)map.size;
  out->mapping = (void*)map.data; /* ours to unmap; borrowed bytes leave this NULL */
  out->mapping_size = (size_t)map.size;
  return XPACK_OK;
}

void xp_et_map_release(xp_et_map* map) {
  if (map->mapping) {
    /* Through file_map.c, which named the mapping for SIGBUS reports and forgets it here. */
    xp_file_map owned = {map->mapping, map->mapping_size};
    xp_unmap_file(&owned);
  }
  memset(map, 0, sizeof *map);
}

int xp_et_map_holds(const xp_et_map* map, const uint8_t* data, size_t size) {
  return map->data != NULL && data >= map->data && size <= map->size && (size_t)(data - map->data) <= map->size - size;
}

int xp_et_key_compare(const char* a, size_t a_len, const char* b, size_t b_len) {
  size_t n = a_len < b_len ? a_len : b_len;
  int c = n ? memcmp(a, b, n) : 0;
  if (c != 0) return c;
  return (a_len > b_len) - (a_len < b_len);
}

char* xp_et_strdup(const char* s) {
  size_t n = strlen(s) + 1;
  char* d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}
