/* Model identity: is this ExecuTorch program one the cache was built from? */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "common/error.h"
#include "common/le.h"
#include "loader/loader_internal.h"
#include "xpc_format.h"

/* The program flatbuffer region of a .pte: the eh00 extended header's program_size, or the whole file
 * without one (then the weights, if any, are inside the flatbuffer and part of the identity). */
static xpack_status program_region(const uint8_t* p, size_t size, uint64_t* region, xpack_error* err) {
  if (size < 8) return xp_fail(err, XPACK_ERR_BAD_INPUT, "program of %zu bytes: expected at least 8", size);
  *region = size;
  if (size < 32 || memcmp(p + 8, "eh00", 4) != 0) return XPACK_OK;
  uint64_t program_size = xp_le64(p + 16);
  if (program_size < 32 || program_size > size) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "program: eh00 program_size (byte 16) = %" PRIu64 "; expected between 32 and the %zu bytes given",
                   program_size, size);
  }
  *region = program_size;
  return XPACK_OK;
}

/* Appends "name (N bytes, xxh3 H)" for every program the cache records, at most `cap` bytes. */
static size_t describe_programs(const xp_view* v, char* out, size_t cap, uint64_t* programs) {
  size_t used = 0;
  *programs = 0;
  out[0] = 0;
  for (uint64_t i = 0; i < v->provenance.count; i++) {
    const uint8_t* r = v->base + v->provenance.offset + i * v->provenance.record_size;
    if (xp_le32(r + XPC_P_KIND) != XPC_INPUT_PTE) continue;
    const char* name = "<unnamed>";
    uint32_t name_len = 0;
    if (xp_view_string(v, xp_le32(r + XPC_P_NAME), &name, &name_len) != 0) name = "<bad name>";
    int n = snprintf(out + used, cap - used, "%s%s (%" PRIu64 " bytes, xxh3 %016" PRIx64 ")", *programs ? ", " : "",
                     name, xp_le64(r + XPC_P_PROGRAM_SIZE), xp_le64(r + XPC_P_PROGRAM_HASH));
    (*programs)++;
    if (n < 0 || (size_t)n >= cap - used) {
      used = cap - 1;
      break;
    }
    used += (size_t)n;
  }
  return used;
}

xpack_status xpack_cache_check_program(const xpack_cache* cache, const void* program, size_t size,
                                       xpack_error* err) {
  if (cache == NULL || (program == NULL && size != 0)) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_cache_check_program: NULL cache or program");
  }
  if (xp_cache_skipped(cache)) {
    return xp_fail(err, XPACK_ERR_MISMATCH, "the cache was not read, so it cannot say which programs it was "
                   "built from; XNNPACK packs every weight (%s)", xpack_cache_refusal(cache));
  }
  uint64_t region = 0;
  xpack_status st = program_region(program, size, &region, err);
  if (st != XPACK_OK) return st;
  uint64_t hash = XXH3_64bits(program, (size_t)region);
  const xp_view* v = xp_cache_view(cache);
  for (uint64_t i = 0; i < v->provenance.count; i++) {
    const uint8_t* r = v->base + v->provenance.offset + i * v->provenance.record_size;
    if (xp_le32(r + XPC_P_KIND) == XPC_INPUT_PTE && xp_le64(r + XPC_P_PROGRAM_SIZE) == region &&
        xp_le64(r + XPC_P_PROGRAM_HASH) == hash) {
      return XPACK_OK;
    }
  }
  char built_from[300];
  uint64_t programs = 0;
  describe_programs(v, built_from, sizeof built_from, &programs);
  return xp_fail(err, XPACK_ERR_MISMATCH,
                 "this program (%" PRIu64 " bytes, xxh3 %016" PRIx64 ") is not one the cache was built from (%s); "
                 "entries are still matched key by key, so expect misses",
                    region, hash, programs ? built_from : "it records no program");
}
