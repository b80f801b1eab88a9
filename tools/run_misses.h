/* run --cache: which weight each missed look-up was for, and why it missed, with what the cache holds of that
 * weight when it holds no entry for the key (the question an engineer asks of a cache that misses). */
#ifndef XPACK_TOOLS_RUN_MISSES_H
#define XPACK_TOOLS_RUN_MISSES_H

#include <stdio.h>

#include "cli_cache_source.h"
#include "json.h"
#include "xpack.h"

typedef struct run_misses run_misses;

/* Starts collecting cache's misses (xpack_cache_on_miss). source names the cache for the hints, which read
 * it as an xpack_file; it must outlive the collection. NULL when cache is NULL or out of memory: every other function then does nothing. */
run_misses* run_misses_start(xpack_cache* cache, const cli_cache_source* source);

/* Forgets the misses collected so far: call it before each delegate. */
void run_misses_clear(run_misses* m);

/* One line per miss collected since the last clear, indented, on out; with limit_lines, no more than a few
 * per run in all (run_misses_print_left_out tells how many were left out). */
void run_misses_print(run_misses* m, FILE* out, int limit_lines);

/* After the last print with limit_lines: one line saying how many misses it left out, if any. */
void run_misses_print_left_out(run_misses* m, FILE* out);

/* The misses collected since the last clear, as the member "missed": [{"reason", "seed", "kernel", "bias",
 * "family", "why"}] of the open JSON object j. */
void run_misses_json(run_misses* m, json* j);

/* Stops the calls and frees m (NULL is ignored); the cache stays open. */
void run_misses_finish(run_misses* m);

#endif
