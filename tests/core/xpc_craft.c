/* xpc_craft: writes small cache files, sound unless the mode says otherwise (every checksum, key hash and
 * check value right, the layout the writer makes), whose shape asks a reader for work out of proportion to their size. For the
 * resource-exhaustion tests (issue 16) and for measuring them by hand.
 *
 *   xpc_craft OUT shared-name N LEN   N entries (seeds 1..N) whose kernel identity is one LEN-byte string,
 *                                     all pointing at one 64-byte region: N x 40 + LEN bytes of metadata
 *                                     asking for N x LEN bytes of identities
 *   xpc_craft OUT same-region N SIZE  N region records all describing one SIZE-byte region at the start of
 *                                     the data area (overlapping: not sound), one entry using the first:
 *                                     N x 32 + SIZE bytes asking a reader that reads each region for N x SIZE
 *   xpc_craft OUT zero-regions N SIZE N sound regions of SIZE zero bytes, the first 1,000 each with its own
 *                                     entry (seeds 1..1000, identity "w"); with zstd, each frame is a few
 *                                     bytes per 128 KiB: the decompression bomb of the transport form, N x
 *                                     SIZE bytes declared (about 32,000 times the frames)
 *   xpc_craft OUT mid-long N LEN      N entries that all claim the key (seed 1, "w"), the middle one of them
 *                                     naming a LEN-byte string instead (not sound: one key claimed N times),
 *                                     so that every search for an entry's key meets that string first
 *   xpc_craft OUT same-hash N         N entries (seeds 1..N, identity "w") that all carry the key hash of
 *                                     seed 1's key, in seed order, so that a look-up of (1, "w") meets one
 *                                     run of N equal key hashes (not sound: N - 1 key hashes are wrong,
 *                                     which only verify recomputes)
 *   ... MODE ARGS zstd                the same in the transport form (every region one zstd frame)
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
#include "cachefile/region_place.h"
#include "common/le.h"
#include "common/target.h"
#include "loader/probe.h"
#include "loader/xnn_compat.h"
#include "xpc_format.h"

static const char kFamily[] = "fully_connected in=f32 w=f32 b=none out=f32 transpose=0";

static int fail(const char* what) {
  fprintf(stderr, "xpc_craft: %s\n", what);
  return 1;
}

/* What a mode asks for: regions (each placed as the writer places it unless it names its offset), entries
 * (seed, which identity, which region, and the key hash they carry unless it is computed) and identities. */
typedef struct craft_region {
  uint64_t size;
  uint8_t fill;    /* every byte of the region */
  int same_as_first; /* the record describes region 0's bytes, at region 0's place (no bytes of its own) */
} craft_region;

typedef struct craft_entry {
  uint64_t key_hash; /* set by craft_write when 0 */
  uint32_t seed, region;
} craft_entry;

typedef struct craft {
  const char* identity; /* every entry's kernel identity */
  uint32_t identity_len;
  const char* middle; /* NULL, or the kernel identity of the middle entry in ENTR's order instead */
  uint32_t middle_len;
  craft_region* regions;
  uint64_t region_count;
  craft_entry* entries;
  uint64_t entry_count;
  int transport;
} craft;

static int by_key(const void* a, const void* b) {
  const craft_entry *x = a, *y = b;
  if (x->key_hash != y->key_hash) return x->key_hash < y->key_hash ? -1 : 1;
  return x->seed < y->seed ? -1 : x->seed > y->seed;
}

/* One region's bytes as stored: the bytes themselves, or one zstd frame of them, compressed from a 1 MiB
 * chunk so that a frame declaring GiBs costs the crafter no more memory than the frame. malloc'd. */
static uint8_t* stored_bytes(const craft_region* r, int transport, uint64_t* stored_size, uint64_t* hash) {
  const size_t chunk_size = r->size < (1u << 20) ? (size_t)r->size : (1u << 20);
  uint8_t* chunk = malloc(transport ? chunk_size : r->size);
  if (chunk == NULL) return NULL;
  memset(chunk, r->fill, transport ? chunk_size : r->size);
  if (!transport) {
    *hash = XXH3_64bits(chunk, r->size);
    *stored_size = r->size;
    return chunk;
  }
  XXH3_state_t* h = XXH3_createState();
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  size_t capacity = 1u << 16, n = 0;
  uint8_t* frame = malloc(capacity);
  int ok = h != NULL && cctx != NULL && frame != NULL && XXH3_64bits_reset(h) == XXH_OK &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3)) &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 20)) &&
           !ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx, r->size));
  for (uint64_t done = 0; ok;) {
    const size_t take = r->size - done < chunk_size ? (size_t)(r->size - done) : chunk_size;
    XXH3_64bits_update(h, chunk, take);
    done += take;
    ZSTD_inBuffer in = {chunk, take, 0};
    size_t left;
    do {
      if (capacity - n < (1u << 16)) {
        uint8_t* grown = realloc(frame, capacity *= 2);
        if (grown == NULL) ok = 0;
        else frame = grown;
      }
      ZSTD_outBuffer out = {frame, capacity, n};
      left = ok ? ZSTD_compressStream2(cctx, &out, &in, done == r->size ? ZSTD_e_end : ZSTD_e_continue) : 0;
      ok = ok && !ZSTD_isError(left);
      n = out.pos;
    } while (ok && (in.pos < in.size || (done == r->size && left != 0)));
    if (done == r->size) break;
  }
  *hash = h != NULL ? XXH3_64bits_digest(h) : 0;
  *stored_size = n;
  XXH3_freeState(h);
  ZSTD_freeCCtx(cctx);
  free(chunk);
  if (!ok) {
    free(frame);
    return NULL;
  }
  return frame;
}

static int craft_write(const char* out, craft* k) {
  for (uint64_t i = 0; i < k->entry_count; i++) {
    if (k->entries[i].key_hash == 0) {
      k->entries[i].key_hash = xp_key_hash(k->entries[i].seed, k->identity, k->identity_len, NULL, 0);
    }
  }
  qsort(k->entries, k->entry_count, sizeof *k->entries, by_key);
  const uint64_t middle_entry = k->middle != NULL ? k->entry_count / 2 : UINT64_MAX;

  xp_probe_result probe;
  xpack_error err;
  if (xp_probe_family(kFamily, sizeof kFamily - 1, &probe, &err) != XPACK_OK) return fail(err.message);
  const uint32_t build_id_size = (uint32_t)xnn_experimental_get_build_identifier_size();
  const uint32_t xnn_alignment = xp_xnn_alignment();
  const uint64_t data_offset = k->transport ? XPC_HEADER_SIZE : XPC_DEFAULT_PAGE_ALIGNMENT;

  /* Place every region and keep its stored bytes; consecutive regions of one size and fill share them. */
  const uint64_t slots = k->region_count ? k->region_count : 1;
  xp_region* records = calloc(slots, sizeof *records);
  const uint8_t** bytes = calloc(slots, sizeof *bytes);
  uint8_t** owned = calloc(slots, sizeof *owned);
  if (records == NULL || bytes == NULL || owned == NULL) return fail("out of memory");
  uint64_t end = data_offset;
  for (uint64_t i = 0; i < k->region_count; i++) {
    const craft_region* r = &k->regions[i];
    if (r->same_as_first && i > 0) {
      records[i] = records[0]; /* no bytes of its own: the writing loop skips it */
      continue;
    }
    if (i > 0 && bytes[i - 1] != NULL && r->size == k->regions[i - 1].size && r->fill == k->regions[i - 1].fill) {
      bytes[i] = bytes[i - 1];
      records[i] = records[i - 1];
    } else {
      bytes[i] = owned[i] = stored_bytes(r, k->transport, &records[i].stored_size, &records[i].hash);
      if (bytes[i] == NULL) return fail("out of memory, or zstd failed");
    }
    records[i].size = r->size;
    records[i].offset = k->transport ? end
                                     : xp_place_region(end, r->size, XPC_DEFAULT_PAGE_ALIGNMENT,
                                                       xp_small_region_alignment(xnn_alignment));
    end = records[i].offset + records[i].stored_size;
  }
  const uint64_t data_end = end;

  /* STRS: the identity at 0, then the family name, then the middle entry's identity. */
  const uint32_t name_at = (uint32_t)xp_string_size(k->identity_len);
  const uint32_t middle_at = (uint32_t)(name_at + xp_string_size(sizeof kFamily - 1));
  const uint64_t strings = middle_at + (k->middle != NULL ? xp_string_size(k->middle_len) : 0);
  xp_table_out tables[] = {
      {XPC_TAG_REGIONS, XPC_REGION_SIZE, k->region_count, 0, NULL},
      {XPC_TAG_ENTRIES, XPC_ENTRY_SIZE, k->entry_count, 0, NULL},
      {XPC_TAG_STRINGS, 1, strings, 0, NULL},
      {XPC_TAG_PROVENANCE, XPC_PROVENANCE_SIZE, 0, 0, NULL},
      {XPC_TAG_BUILD_ID, 1, build_id_size, 0, NULL},
      {XPC_TAG_INFO, XPC_INFO_SIZE, 0, 0, NULL},
      {XPC_TAG_FAMILIES, XPC_FAMILY_SIZE, 1, 0, NULL},
  };
  xp_metadata_out m;
  if (xp_metadata_begin(&m, tables, sizeof tables / sizeof tables[0], data_end, out, &err) != XPACK_OK) {
    return fail(err.message);
  }
  uint8_t* regn = xp_metadata_table(&m, XPC_TAG_REGIONS);
  for (uint64_t i = 0; i < k->region_count; i++) xp_put_region(regn + i * XPC_REGION_SIZE, &records[i]);
  uint8_t* entries = xp_metadata_table(&m, XPC_TAG_ENTRIES);
  for (uint64_t i = 0; i < k->entry_count; i++) {
    const xp_entry e = {k->entries[i].key_hash, k->entries[i].seed, i == middle_entry ? middle_at : 0, XPC_NONE,
                        k->entries[i].region, 0, 0, 0};
    xp_put_entry(entries + i * XPC_ENTRY_SIZE, &e);
  }
  uint8_t* strs = xp_metadata_table(&m, XPC_TAG_STRINGS);
  xp_put_string(strs, k->identity, k->identity_len);
  xp_put_string(strs + name_at, kFamily, sizeof kFamily - 1);
  if (k->middle != NULL) xp_put_string(strs + middle_at, k->middle, k->middle_len);
  memcpy(xp_metadata_table(&m, XPC_TAG_BUILD_ID), xnn_experimental_get_build_identifier_data(), build_id_size);
  const xp_family family = {name_at, 0, probe.hash, probe.keys};
  xp_put_family(xp_metadata_table(&m, XPC_TAG_FAMILIES), &family);
  xp_metadata_put_entry_checks(&m);
  const uint32_t flags = k->transport ? XPC_FLAG_TRANSPORT : 0;
  xp_metadata_seal(&m, XPC_VERSION_MAJOR, XPC_VERSION_MINOR, flags);

  uint8_t header[XPC_HEADER_SIZE] = {0};
  const xp_header_fields fields = {XPC_VERSION_MAJOR, XPC_VERSION_MINOR,    flags,
                                   XPC_DEFAULT_PAGE_ALIGNMENT, xnn_alignment, xp_target_arch(),
                                   data_offset,       data_end - data_offset};
  xp_header_put(header, &fields);

  /* Header, zeros up to each region's place and its bytes, zeros up to the metadata, metadata and footer. */
  FILE* f = fopen(out, "wb");
  if (f == NULL) return fail("cannot create the output");
  static const uint8_t zeros[XPC_DEFAULT_PAGE_ALIGNMENT];
  int ok = fwrite(header, 1, sizeof header, f) == sizeof header;
  uint64_t at = sizeof header;
  for (uint64_t i = 0; i < k->region_count && ok; i++) {
    if (records[i].offset < at) continue; /* a record describing bytes already written */
    for (; at < records[i].offset && ok; at++) ok = fputc(0, f) != EOF;
    ok = ok && fwrite(bytes[i], 1, records[i].stored_size, f) == records[i].stored_size;
    at += records[i].stored_size;
  }
  const uint64_t padding = m.metadata_offset - at;
  ok = ok && fwrite(zeros, 1, padding, f) == padding && fwrite(m.tail, 1, m.tail_size, f) == m.tail_size;
  ok = fclose(f) == 0 && ok;
  xp_metadata_free(&m);
  for (uint64_t i = 0; i < k->region_count; i++) free(owned[i]);
  free(owned);
  free(bytes);
  free(records);
  return ok ? 0 : fail("write failed");
}

/* A string of len letters, "abc...zab...": malloc'd, NULL when out of memory. */
static char* letters(uint64_t len) {
  char* s = malloc(len ? len : 1);
  for (uint64_t i = 0; s != NULL && i < len; i++) s[i] = (char)('a' + i % 26);
  return s;
}

int main(int argc, char** argv) {
  if (xnn_initialize(NULL) != xnn_status_success) return fail("xnn_initialize failed");
  const int transport = argc >= 5 && strcmp(argv[argc - 1], "zstd") == 0;
  const int args = argc - transport; /* OUT MODE and the mode's numbers */
  const char* mode = argc >= 3 ? argv[2] : "";
  const uint64_t n = args >= 4 ? strtoull(argv[3], NULL, 10) : 0;
  const uint64_t x = args >= 5 ? strtoull(argv[4], NULL, 10) : 0;
  craft k = {"w", 1, NULL, 0, NULL, 0, NULL, 0, transport};
  static craft_region one = {64, 0xAB, 0};
  char* identity = NULL;
  if (strcmp(mode, "shared-name") == 0 && args == 5) {
    if ((identity = letters(x)) == NULL) return fail("out of memory");
    k.identity = identity, k.identity_len = (uint32_t)x;
    k.regions = &one, k.region_count = 1;
    k.entry_count = n;
  } else if (strcmp(mode, "same-region") == 0 && args == 5) {
    k.regions = calloc(n, sizeof *k.regions), k.region_count = n;
    if (k.regions == NULL) return fail("out of memory");
    for (uint64_t i = 0; i < n; i++) k.regions[i] = (craft_region){x, 0xAB, 1};
    k.entry_count = 1;
  } else if (strcmp(mode, "zero-regions") == 0 && args == 5) {
    k.regions = calloc(n, sizeof *k.regions), k.region_count = n;
    if (k.regions == NULL) return fail("out of memory");
    for (uint64_t i = 0; i < n; i++) k.regions[i] = (craft_region){x, 0, 0};
    k.entry_count = n < 1000 ? n : 1000; /* one identity: more entries would be refused as sharing it */
  } else if (strcmp(mode, "mid-long") == 0 && args == 5) {
    if ((identity = letters(x)) == NULL) return fail("out of memory");
    k.middle = identity, k.middle_len = (uint32_t)x;
    k.regions = &one, k.region_count = 1;
    k.entry_count = n;
  } else if (strcmp(mode, "same-hash") == 0 && args == 4) {
    k.regions = &one, k.region_count = 1;
    k.entry_count = n;
  } else {
    fprintf(stderr, "usage: xpc_craft OUT shared-name N LEN | same-region N SIZE | zero-regions N SIZE | "
                    "mid-long N LEN | same-hash N  [zstd]\n");
    return 2;
  }
  k.entries = calloc(k.entry_count ? k.entry_count : 1, sizeof *k.entries);
  if (k.entries == NULL) return fail("out of memory");
  const int one_key = strcmp(mode, "mid-long") == 0;
  const uint64_t same_hash = strcmp(mode, "same-hash") == 0 || one_key ? xp_key_hash(1, k.identity, k.identity_len, NULL, 0) : 0;
  for (uint64_t i = 0; i < k.entry_count; i++) {
    k.entries[i] = (craft_entry){same_hash, one_key ? 1u : (uint32_t)(i + 1),
                                 strcmp(mode, "zero-regions") == 0 ? (uint32_t)i : 0};
  }
  const int st = craft_write(argv[1], &k);
  free(identity);
  free(k.entries);
  if (k.regions != &one) free(k.regions);
  return st;
}
