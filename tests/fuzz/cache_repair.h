/* Checksum repair for the cache fuzzers (fuzz_cache, fuzz_inflate, fuzz_loader).
 *
 * Recomputes, in place, every checksum that the bytes' own structure implies: header, footer, directory,
 * metadata area, every table's hash, every entry's key hash and check value. Best effort: anything out of
 * bounds is left alone. Without it almost every mutation dies at the first checksum and the code behind it
 * is never reached. */
#ifndef XPACK_TESTS_FUZZ_CACHE_REPAIR_H
#define XPACK_TESTS_FUZZ_CACHE_REPAIR_H

#include <stddef.h>
#include <stdint.h>

void xp_fuzz_repair(uint8_t* bytes, uint64_t size);

/* A fuzzer's whole input step: fn over the bytes as given (an empty input as a valid pointer and size 0), then over
 * a repaired copy when the repair changed anything. */
void xp_fuzz_as_given_and_repaired(const uint8_t* data, size_t size, void (*fn)(const uint8_t* bytes, size_t size));

#endif
