/* xpc_tamper: changes one thing in a cache file on purpose and re-seals every checksum that covers it
 * (the table's hash in the directory, the directory and metadata checksums, the footer checksum, and
 * entry check values where entries change), so that the file is sound and only the change differs. What a
 * loader then does is its reaction to that change alone, not to damage.
 *
 *   xpc_tamper FILE probe INDEX      FAMI record INDEX: probe value XOR 1
 *   xpc_tamper FILE name INDEX       FAMI record INDEX: the last byte of its name changed (an unknown family)
 *   xpc_tamper FILE build-id         BLDI: first byte XOR 1 (another XNNPACK build)
 *   xpc_tamper FILE no-family        every entry's family set to 0xFFFFFFFF (as a format 1.0 writer did)
 *
 * The file is rewritten in place (a test tool: no atomic replace). Exit 0, or 1 with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/le.h"
#include "xpc_format.h"

static uint8_t* g_file;
static size_t g_size;

static int die(const char* what) {
  fprintf(stderr, "xpc_tamper: %s\n", what);
  return 1;
}

/* The directory entry of `tag`, or NULL. */
static uint8_t* dir_entry(uint32_t tag) {
  const uint8_t* f = g_file + g_size - XPC_FOOTER_SIZE;
  uint64_t dir = xp_le64(f + XPC_F_DIR_OFFSET);
  uint32_t count = xp_le32(f + XPC_F_DIR_COUNT);
  for (uint32_t i = 0; i < count; i++) {
    uint8_t* d = g_file + dir + (uint64_t)i * XPC_DIR_ENTRY_SIZE;
    if (xp_le32(d + XPC_D_TAG) == tag) return d;
  }
  return NULL;
}

static uint8_t* table(uint32_t tag, uint64_t* count, uint32_t* record_size) {
  uint8_t* d = dir_entry(tag);
  if (d == NULL) return NULL;
  *count = xp_le64(d + XPC_D_COUNT);
  *record_size = xp_le32(d + XPC_D_RECORD_SIZE);
  return g_file + xp_le64(d + XPC_D_OFFSET);
}

/* Recomputes the table's hash, then the directory, metadata and footer checksums. */
static void reseal(uint32_t tag) {
  uint8_t* d = dir_entry(tag);
  uint64_t count;
  uint32_t record_size;
  uint8_t* t = table(tag, &count, &record_size);
  xp_put64(d + XPC_D_HASH, XXH3_64bits(t, (size_t)(count * record_size)));
  uint8_t* f = g_file + g_size - XPC_FOOTER_SIZE;
  uint64_t dir = xp_le64(f + XPC_F_DIR_OFFSET);
  xp_put64(f + XPC_F_DIR_HASH, XXH3_64bits(g_file + dir, (size_t)xp_le32(f + XPC_F_DIR_COUNT) * XPC_DIR_ENTRY_SIZE));
  uint64_t meta = xp_le64(f + XPC_F_METADATA_OFFSET);
  xp_put64(f + XPC_F_METADATA_HASH, XXH3_64bits(g_file + meta, (size_t)xp_le64(f + XPC_F_METADATA_SIZE)));
  xp_put64(f + XPC_F_CHECKSUM, XXH3_64bits(f, XPC_F_CHECKSUM));
}

static int family_record(const char* index_text, uint8_t** record) {
  uint64_t count;
  uint32_t record_size;
  uint8_t* t = table(XPC_TAG_FAMILIES, &count, &record_size);
  char* end;
  unsigned long index = strtoul(index_text, &end, 10);
  if (t == NULL || *end != 0 || index >= count) return -1;
  *record = t + index * record_size;
  return 0;
}

static int tamper(const char* what, const char* arg) {
  if (strcmp(what, "probe") == 0 && arg) {
    uint8_t* m;
    if (family_record(arg, &m) != 0) return die("no such family record");
    xp_put64(m + XPC_M_PROBE_HASH, xp_le64(m + XPC_M_PROBE_HASH) ^ 1);
    reseal(XPC_TAG_FAMILIES);
    return 0;
  }
  if (strcmp(what, "name") == 0 && arg) {
    uint8_t* m;
    uint64_t n;
    uint32_t rs;
    uint8_t* strings = table(XPC_TAG_STRINGS, &n, &rs);
    if (family_record(arg, &m) != 0 || strings == NULL) return die("no such family record");
    uint32_t offset = xp_le32(m + XPC_M_NAME);
    uint32_t len = offset + 4 <= n ? xp_le32(strings + offset) : 0;
    if (len == 0 || (uint64_t)offset + 4 + len > n) return die("family name out of bounds");
    strings[offset + 4 + len - 1] = '9'; /* "transpose=9", "out=f39", ...: no family spells so */
    reseal(XPC_TAG_STRINGS);
    return 0;
  }
  if (strcmp(what, "build-id") == 0) {
    uint64_t n;
    uint32_t rs;
    uint8_t* b = table(XPC_TAG_BUILD_ID, &n, &rs);
    if (b == NULL || n == 0) return die("no build identifier");
    b[0] ^= 1;
    reseal(XPC_TAG_BUILD_ID);
    return 0;
  }
  if (strcmp(what, "no-family") == 0) {
    uint64_t entries, regions;
    uint32_t es, rs;
    uint8_t* e = table(XPC_TAG_ENTRIES, &entries, &es);
    uint8_t* r = table(XPC_TAG_REGIONS, &regions, &rs);
    if (e == NULL || r == NULL) return die("no ENTR or REGN table");
    for (uint64_t i = 0; i < entries; i++) {
      uint8_t* rec = e + i * es;
      uint32_t region = xp_le32(rec + XPC_E_REGION);
      if (region >= regions) return die("entry with a bad region index");
      xp_put32(rec + XPC_E_FAMILY, XPC_NONE);
      uint8_t check[XPC_E_CHECK + XPC_REGION_SIZE];
      memcpy(check, rec, XPC_E_CHECK);
      memcpy(check + XPC_E_CHECK, r + (uint64_t)region * rs, XPC_REGION_SIZE);
      xp_put64(rec + XPC_E_CHECK, XXH3_64bits(check, sizeof check));
    }
    reseal(XPC_TAG_ENTRIES);
    return 0;
  }
  return die("usage: xpc_tamper FILE probe INDEX | name INDEX | build-id | no-family");
}

int main(int argc, char** argv) {
  if (argc < 3) return tamper("", NULL);
  FILE* f = fopen(argv[1], "rb");
  if (f == NULL) return die("cannot open the file");
  fseek(f, 0, SEEK_END);
  g_size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  g_file = malloc(g_size ? g_size : 1);
  if (g_file == NULL || fread(g_file, 1, g_size, f) != g_size || g_size < XPC_HEADER_SIZE + XPC_FOOTER_SIZE ||
      memcmp(g_file + g_size - XPC_FOOTER_MAGIC_SIZE, XPC_FOOTER_MAGIC, XPC_FOOTER_MAGIC_SIZE) != 0) {
    fclose(f);
    return die("not an xpack cache");
  }
  fclose(f);
  int rc = tamper(argv[2], argc > 3 ? argv[3] : NULL);
  if (rc == 0) {
    f = fopen(argv[1], "wb");
    if (f == NULL || fwrite(g_file, 1, g_size, f) != g_size || fclose(f) != 0) return die("cannot write the file");
  }
  free(g_file);
  return rc;
}
