/* Every check of a cache file beyond what opening its view checks (docs/FORMAT.md section 8, and 9.1 for
 * the transport form), made once for all who need them: `xpack verify` lists every problem, compress and
 * inflate refuse a source at the first one, so that they never turn damage into a file that looks sound.
 *
 * Each problem is reported to a callback as (where, what): where names the record or area and its
 * offset ("region 3 at offset 4096"), what says what is wrong and what was expected. The callback
 * returns nonzero to stop: no further problem is then reported. Region bytes are not read here (they are
 * checked as each user reads them): xpc_check_regions hands every soundly placed region to the caller. */
#ifndef XPACK_SRC_CACHE_CHECKS_H
#define XPACK_SRC_CACHE_CHECKS_H

#include <stdint.h>

#include "cachefile/cache_view.h"
#include "common/error.h"
#include "xpack_status.h"

/* Returns nonzero to stop checking. */
typedef int (*xpc_problem_fn)(void* context, const char* where, const char* what);

typedef struct xpc_checker {
  const xpc_view* v;
  xpc_problem_fn fn;
  void* context;
  uint64_t problems; /* reported so far */
  int stopped;       /* the callback asked to stop */
} xpc_checker;

void xpc_checker_init(xpc_checker* c, const xpc_view* v, xpc_problem_fn fn, void* context);

/* Reports a problem: where_fmt takes one unsigned long long (an index or an offset). Does nothing once
 * stopped. */
void xpc_problem(xpc_checker* c, const char* where_fmt, uint64_t where_arg, const char* what_fmt, ...)
    XPACK_PRINTF(4, 5);

/* The metadata checksum and every directory table's checksum, tags this version does not know included. */
void xpc_check_tables(xpc_checker* c);

/* Called for each region that lies soundly inside the data area, in REGN order, to check its bytes;
 * where is its "region N at offset %llu" (formatted with r->offset). */
typedef void (*xpc_region_fn)(void* context, xpc_checker* c, uint64_t index, const xpc_region* r,
                              const char* where);

/* Every REGN record's placement: inside the data area, aligned, not overlapping the one before; in the
 * transport form also non-empty frames back to back from offset 64 that fill the data area, with the
 * metadata at the next multiple of 8. Each sound region goes to region_fn (may be NULL). */
void xpc_check_regions(xpc_checker* c, xpc_region_fn region_fn, void* region_context);

/* Every ENTR record: identities that are strings of STRS, the key hash over them, ascending key_hash
 * order, a family (required since format 1.1) and a region that exist, and the check value. */
void xpc_check_entries(xpc_checker* c);

/* PROV, INFO and FAMI: their string offsets, and PROV's input kinds. */
void xpc_check_small_tables(xpc_checker* c);

/* All of the above in that order, regions without a byte check; stops where the callback asks. */
void xpc_check_all(xpc_checker* c);

/* xpc_check_all stopping at the first problem: XPACK_OK, or XPACK_ERR_CORRUPT with
 * "<name>: <where>: <what>" in err. */
xpack_status xpc_check_first(const xpc_view* v, const char* name, xpack_error* err);

#endif
