/* xpc_craft: writes small, sound cache files (every checksum, key hash and check value right, the layout
 * the writer makes) whose shape asks a reader for work out of proportion to their size. For the
 * resource-exhaustion tests (issue 16) and for measuring them by hand.
 *
 *   xpc_craft OUT shared-name N LEN   N entries (seeds 1..N) whose kernel identity is one LEN-byte string,
 *                                     all pointing at one 64-byte region: N x 40 + LEN bytes of metadata
 *                                     asking for N x LEN bytes of identities
 *   ... shared-name N LEN zstd        the same in the transport form (the region one zstd frame)
 *
 * The family is fully_connected f32 with the probe this process packs, and BLDI is this XNNPACK's, so the
 * file is also one this machine's loader would serve. Exit 0, or 1 with a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>
#include <xxhash.h>
#include <zstd.h>

#include "cachefile/cache_write.h"
#include "common/le.h"
#include "common/target.h"
#include "loader/probe.h"
#include "xpc_format.h"

static const char kFamily[] = "fully_connected in=f32 w=f32 b=none out=f32 transpose=0";

typedef struct keyed {
  uint64_t key_hash;
  uint32_t seed;
} keyed;

static int by_key_hash(const void* a, const void* b) {
  const keyed *x = a, *y = b;
  if (x->key_hash != y->key_hash) return x->key_hash < y->key_hash ? -1 : 1;
  return x->seed < y->seed ? -1 : x->seed > y->seed;
}

static int fail(const char* what) {
  fprintf(stderr, "xpc_craft: %s\n", what);
  return 1;
}

static int shared_name(const char* out, uint64_t n, uint32_t len, int transport) {
  char* identity = malloc(len ? len : 1);
  keyed* keys = malloc(n * sizeof *keys);
  if (identity == NULL || keys == NULL) return fail("out of memory");
  for (uint32_t i = 0; i < len; i++) identity[i] = (char)('a' + i % 26);
  for (uint64_t i = 0; i < n; i++) {
    keys[i].seed = (uint32_t)(i + 1);
    keys[i].key_hash = xp_key_hash(keys[i].seed, identity, len, NULL, 0);
  }
  qsort(keys, n, sizeof *keys, by_key_hash);

  xp_probe_result probe;
  xpack_error err;
  if (xp_probe_family(kFamily, sizeof kFamily - 1, &probe, &err) != XPACK_OK) return fail(err.message);
  const uint32_t build_id_size = (uint32_t)xnn_experimental_get_build_identifier_size();

  /* STRS: the identity at 0, then the family name. */
  const uint32_t name_at = (uint32_t)xp_string_size(len);
  const uint64_t strings = name_at + xp_string_size(sizeof kFamily - 1);
  const uint32_t xnn_alignment = xp_target_xnn_alignment();
  uint8_t region_bytes[64], frame[128];
  memset(region_bytes, 0xAB, sizeof region_bytes);
  const uint64_t region_size = sizeof region_bytes;
  const uint64_t data_offset = transport ? XPC_HEADER_SIZE : XPC_DEFAULT_PAGE_ALIGNMENT;
  const size_t frame_size = ZSTD_compress(frame, sizeof frame, region_bytes, sizeof region_bytes, 3);
  if (ZSTD_isError(frame_size)) return fail("zstd failed");
  const uint64_t stored_size = transport ? frame_size : region_size;
  const uint64_t data_end = data_offset + stored_size;
  xp_table_out tables[] = {
      {XPC_TAG_REGIONS, XPC_REGION_SIZE, 1, 0, NULL},     {XPC_TAG_ENTRIES, XPC_ENTRY_SIZE, n, 0, NULL},
      {XPC_TAG_STRINGS, 1, strings, 0, NULL},             {XPC_TAG_PROVENANCE, XPC_PROVENANCE_SIZE, 0, 0, NULL},
      {XPC_TAG_BUILD_ID, 1, build_id_size, 0, NULL},      {XPC_TAG_INFO, XPC_INFO_SIZE, 0, 0, NULL},
      {XPC_TAG_FAMILIES, XPC_FAMILY_SIZE, 1, 0, NULL},
  };
  xp_metadata_out m;
  if (xp_metadata_begin(&m, tables, sizeof tables / sizeof tables[0], data_end, out, &err) != XPACK_OK) {
    return fail(err.message);
  }
  const xp_region region = {data_offset, stored_size, region_size, XXH3_64bits(region_bytes, sizeof region_bytes)};
  xp_put_region(xp_metadata_table(&m, XPC_TAG_REGIONS), &region);
  uint8_t* entries = xp_metadata_table(&m, XPC_TAG_ENTRIES);
  for (uint64_t i = 0; i < n; i++) {
    const xp_entry e = {keys[i].key_hash, keys[i].seed, 0, XPC_NONE, 0, 0, 0, 0};
    xp_put_entry(entries + i * XPC_ENTRY_SIZE, &e);
  }
  uint8_t* strs = xp_metadata_table(&m, XPC_TAG_STRINGS);
  xp_put_string(strs, identity, len);
  xp_put_string(strs + name_at, kFamily, sizeof kFamily - 1);
  memcpy(xp_metadata_table(&m, XPC_TAG_BUILD_ID), xnn_experimental_get_build_identifier_data(), build_id_size);
  const xp_family family = {name_at, 0, probe.hash, probe.keys};
  xp_put_family(xp_metadata_table(&m, XPC_TAG_FAMILIES), &family);
  xp_metadata_put_entry_checks(&m);
  const uint32_t flags = transport ? XPC_FLAG_TRANSPORT : 0;
  xp_metadata_seal(&m, XPC_VERSION_MAJOR, XPC_VERSION_MINOR, flags);

  uint8_t header[XPC_HEADER_SIZE] = {0};
  const xp_header_fields fields = {XPC_VERSION_MAJOR, XPC_VERSION_MINOR, flags, XPC_DEFAULT_PAGE_ALIGNMENT,
                                   xnn_alignment, xp_target_arch(), data_offset, stored_size};
  xp_header_put(header, &fields);

  FILE* f = fopen(out, "wb");
  if (f == NULL) return fail("cannot create the output");
  static const uint8_t zeros[XPC_DEFAULT_PAGE_ALIGNMENT];
  const uint64_t padding = m.metadata_offset - data_end; /* after the header (mappable) or the frame (transport) */
  int ok = fwrite(header, 1, sizeof header, f) == sizeof header &&
           fwrite(zeros, 1, data_offset - sizeof header, f) == data_offset - sizeof header &&
           fwrite(transport ? frame : region_bytes, 1, stored_size, f) == stored_size &&
           fwrite(zeros, 1, padding, f) == padding &&
           fwrite(m.tail, 1, m.tail_size, f) == m.tail_size;
  ok = fclose(f) == 0 && ok;
  xp_metadata_free(&m);
  free(keys);
  free(identity);
  return ok ? 0 : fail("write failed");
}

int main(int argc, char** argv) {
  if (xnn_initialize(NULL) != xnn_status_success) return fail("xnn_initialize failed");
  if ((argc == 5 || (argc == 6 && strcmp(argv[5], "zstd") == 0)) && strcmp(argv[2], "shared-name") == 0) {
    return shared_name(argv[1], strtoull(argv[3], NULL, 10), (uint32_t)strtoul(argv[4], NULL, 10), argc == 6);
  }
  fprintf(stderr, "usage: xpc_craft OUT shared-name N LEN [zstd]\n");
  return 2;
}
