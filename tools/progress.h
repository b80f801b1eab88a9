/* A progress line on stderr for long commands (xpack pack): drawn only on a terminal, only once the work has
 * lasted more than a second, redrawn at most ten times a second, and erased when the work ends, so that
 * logs, pipes and quick runs never see it. The environment variable XPACK_PROGRESS_DELAY_MS replaces the
 * second; 0 draws it at once (the tests). */
#ifndef XPACK_TOOLS_PROGRESS_H
#define XPACK_TOOLS_PROGRESS_H

#include <stdint.h>

typedef struct progress progress;

/* Starts a progress line "LABEL: DONE/TOTAL UNIT, BYTES packed" (TOTAL from progress_set_total) drawn by a background thread.
 * Returns NULL (and draws nothing) when stderr is not a terminal, with -q, when `enabled` is 0 (e.g. --json),
 * or when the thread cannot start; every other function accepts NULL. The caller owns the result and ends
 * it with progress_finish. `label` and `unit` must outlive it. */
progress* progress_start(const char* label, const char* unit, int enabled);

/* Sets the number of items (0 until called). */
void progress_set_total(progress* p, uint64_t total);

/* Records one more item done and the bytes so far. Safe from any thread. */
void progress_item_done(progress* p, uint64_t bytes_so_far);

/* Stops the thread, erases the line if it was drawn, and frees p. Call before printing results. */
void progress_finish(progress* p);

#endif
