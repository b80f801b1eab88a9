/* Checksum repair for the cache fuzzers (fuzz_cache, fuzz_inflate).
 *
 * Recomputes, in place, every checksum that the bytes' own structure implies: header, footer, directory,
 * metadata area, every table's hash, every entry's key hash and check value. Best effort: anything out of
 * bounds is left alone. Without it almost every mutation dies at the first checksum and the code behind it
 * is never reached. */
#ifndef XPACK_TESTS_FUZZ_CACHE_REPAIR_H
#define XPACK_TESTS_FUZZ_CACHE_REPAIR_H

#include <stdint.h>

void xp_fuzz_repair(uint8_t* bytes, uint64_t size);

#endif
