/* The whole-file check of `xpack verify` on a view already open, for callers that must check the very
 * bytes they go on to use (export): opening the file again by its path could check another file, put in
 * its place between the two opens. */
#ifndef XPACK_SRC_VERIFY_H
#define XPACK_SRC_VERIFY_H

#include <stdint.h>

#include "cachefile/cache_view.h"
#include "xpack.h"

/* Runs every check of xpack_verify_file beyond open on v (tables, every region's bytes, entries), calling
 * fn (which may be NULL) once per problem, and returns the number of problems. v stays the caller's. */
uint64_t xp_verify_view(const xp_view* v, xpack_problem_fn fn, void* context);

#endif
