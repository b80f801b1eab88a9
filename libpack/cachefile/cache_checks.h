/* Every check of a cache file beyond what opening its view checks (docs/FORMAT.md section 8, and 9.1 for
 * the transport form), made once for all who need them: `xpack verify` lists every problem, compress and
 * inflate refuse a source at the first one, so that they never turn damage into a file that looks sound.
 *
 * Each problem is reported to a callback as (where, what): where names the record or area and its
 * offset ("region 3 at offset 4096"), what says what is wrong and what was expected. The callback
 * returns nonzero to stop: no further problem is then reported. Together with open, the checks cover every
 * rule of FORMAT.md a file can break (its section 8 lists them), so that a file without problems is one the
 * writer could have written. Region bytes are not read here (they are checked as each user reads them):
 * xp_check_regions hands every soundly placed region to the caller; it does read the padding around
 * regions, which is O(data) like hashing them, and which every user (verify, compress, inflate) pays. */
#ifndef XPACK_SRC_CACHE_CHECKS_H
#define XPACK_SRC_CACHE_CHECKS_H

#include <stdint.h>

#include "cachefile/cache_view.h"
#include "common/error.h"
#include "xpack_status.h"

/* Returns nonzero to stop checking. */
typedef int (*xp_problem_fn)(void* context, const char* where, const char* what);

typedef struct xp_checker {
  const xp_view* v;
  xp_problem_fn fn;
  void* context;
  uint64_t problems; /* reported so far */
  int stopped;       /* the callback asked to stop */
} xp_checker;

void xp_checker_init(xp_checker* c, const xp_view* v, xp_problem_fn fn, void* context);

/* Reports a problem: where_fmt, a format of the code's own (never text from a file), takes one unsigned long long
 * (an index or an offset). Does nothing once stopped. */
void xp_problem(xp_checker* c, const char* where_fmt, uint64_t where_arg, const char* what_fmt, ...)
    XPACK_PRINTF(4, 5);

/* The metadata checksum and every directory table's checksum, tags this version does not know included;
 * the header's reserved fields (files of this version or older); the metadata area's layout (tables in
 * directory order at the next multiple of 8, then the directory) and its zero padding. */
void xp_check_tables(xp_checker* c);

/* Called for each region that lies soundly inside the data area, in REGN order, to check its bytes;
 * where is its "region N at offset %llu" (formatted with r->offset). */
typedef void (*xp_region_fn)(void* context, xp_checker* c, uint64_t index, const xp_region* r,
                             const char* where);

/* Every REGN record's placement: inside the data area, a size that is a multiple of xnn_alignment, where
 * the writer places it (the first aligned offset after the previous region, large regions page-aligned)
 * with zero padding before it, the data area ending with the last region and the metadata at the next
 * multiple of 8 (zero padding between); in the transport form non-empty frames back to back from offset 64
 * that fill the data area. Each sound region goes to region_fn (may be NULL). */
void xp_check_regions(xp_checker* c, xp_region_fn region_fn, void* region_context);

/* Every ENTR record: identities that are strings of STRS, the key hash over them, the order of FORMAT.md
 * 5.3 (key_hash, seed, kernel, bias) with no key twice, known flags only, a family (required since format
 * 1.1) and a region that exist, and the check value. */
void xp_check_entries(xp_checker* c);

/* PROV, INFO and FAMI: their string offsets, PROV's input kinds, and FAMI's names (unique, ascending),
 * flags and reserved field 0, and that an entry uses each family. */
void xp_check_small_tables(xp_checker* c);

/* All of the above in that order, regions without a byte check; stops where the callback asks. */
void xp_check_all(xp_checker* c);

/* xp_check_all stopping at the first problem: XPACK_OK, or XPACK_ERR_CORRUPT with
 * "<name>: <where>: <what>" in err. */
xpack_status xp_check_first(const xp_view* v, const char* name, xpack_error* err);

#endif
