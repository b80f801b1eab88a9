/* libFuzzer harness: arbitrary bytes as a transport-form cache through inflate (xp_transport_inflate_view, all of
 * xpack_inflate_file but the files): the checks of the source, the rebuilt layout, and every region's zstd
 * frame decoded into an in-memory output bounded at 16 MiB. Nothing may read outside [data, data + size)
 * or write outside the output, and an inflate that succeeds must produce a sound mappable cache: it opens
 * in the loader's form, passes the checks a conversion makes (every checksum, entry and region placement),
 * and every region's bytes have the region's XXH3-64. Anything else aborts (a finding).
 *
 * Each input runs as given and "repaired" (cache_repair.h), so that mutations of the records get past
 * the checksums; mutations of frames need no repair (the data area has no checksum of its own). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cache_repair.h"
#include "cachefile/cache_checks.h"
#include "cachefile/cache_view.h"
#include "common/error.h"
#include "transport/transport.h"
#include "xpc_format.h"

#define FUZZ_MAX_OUTPUT (16u << 20)

typedef struct memory_out {
  uint8_t* bytes;
  size_t size, capacity;
} memory_out;

/* Grows the output to hold `end` bytes; new bytes are zero, as the gaps of a truncated file read. */
static int reserve(memory_out* m, size_t end) {
  if (end <= m->capacity) return 0;
  size_t capacity = m->capacity ? m->capacity : 4096;
  while (capacity < end) capacity *= 2;
  uint8_t* grown = realloc(m->bytes, capacity);
  if (grown == NULL) return -1;
  memset(grown + m->capacity, 0, capacity - m->capacity);
  m->bytes = grown;
  m->capacity = capacity;
  return 0;
}

static xpack_status write_memory(void* context, const uint8_t* bytes, size_t n, uint64_t offset, xpack_error* err) {
  memory_out* m = context;
  if (offset > FUZZ_MAX_OUTPUT || n > FUZZ_MAX_OUTPUT - offset) {
    return xp_fail(err, XPACK_ERR_IO, "fuzz: output beyond 16 MiB");
  }
  if (reserve(m, (size_t)offset + n) != 0) return xp_fail(err, XPACK_ERR_NOMEM, "fuzz: out of memory");
  memcpy(m->bytes + offset, bytes, n);
  if (offset + n > m->size) m->size = (size_t)offset + n;
  return XPACK_OK;
}

static void finding(const char* what, const char* detail) {
  fprintf(stderr, "fuzz_inflate: %s: %s\n", what, detail);
  abort();
}

/* What a successful inflate promises about its output. */
static void check_output(memory_out* m, uint64_t file_size) {
  if (file_size > FUZZ_MAX_OUTPUT || reserve(m, (size_t)file_size) != 0) finding("output size", "too large");
  xp_view out;
  xpack_error err;
  if (xp_view_open(&out, m->bytes, file_size, "inflated.xpc", 0, &err) != XPACK_OK) {
    finding("inflated file does not open in the loader's form", err.message);
  }
  if (xp_check_first(&out, "inflated.xpc", &err) != XPACK_OK) finding("inflated file is not sound", err.message);
  for (uint64_t i = 0; i < out.regions.count; i++) {
    xp_region r;
    xp_view_region(&out, i, &r);
    if (XXH3_64bits(out.base + r.offset, (size_t)r.size) != r.hash) finding("inflated region", "XXH3-64 differs");
  }
}

static void inflate_bytes(const uint8_t* base, size_t size) {
  xp_view v;
  xpack_error err;
  if (xp_view_open(&v, base, size, "fuzz.xpc", 1, &err) != XPACK_OK) return;
  memory_out m = {0};
  xp_transport_sink sink = {write_memory, &m, NULL};
  uint64_t file_size = 0;
  xpack_transport_stats stats;
  if (xp_transport_inflate_view(&v, "fuzz.xpc", &sink, 0, &file_size, &stats, &err) == XPACK_OK) check_output(&m, file_size);
  free(m.bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  xp_fuzz_as_given_and_repaired(data, size, inflate_bytes);
  return 0;
}
