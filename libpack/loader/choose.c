/* Choosing one cache among several packed for different classes of CPU: the one this process serves most. */
#include <stdlib.h>
#include <string.h>

#include "cachefile/string_sharing.h"
#include "common/error.h"
#include "loader/cache_state.h"

uint64_t xpack_cache_entries_served(xpack_cache* c) {
  if (c == NULL || c->skipped || c->refusal[0] != 0) return 0;
  /* Looking every entry up reads its identities: over records sharing strings far beyond what a writer makes (40,000
   * entries naming one 8 MiB string) that took time growing with the square of the file (70 s for 10 MB, found by
   * a review). Such a file serves nothing here; xpack verify refuses it whole. */
  xp_string_sharing sharing;
  if (xp_view_strings_overshared(&c->view, &sharing)) return 0;
  const uint32_t family_count = c->families.count;
  for (uint32_t i = 0; i < family_count; i++) (void)xp_families_decide(&c->families, &c->view, NULL, i);
  uint64_t served = 0;
  for (uint64_t i = 0; i < c->view.entries.count; i++) {
    xp_entry e;
    xp_view_entry(&c->view, i, &e);
    /* An entry naming no family (a format 1.0 file) is refused as every look-up of it would be, and so is one
     * that its own key's look-up does not find sound (a damaged check value or region, a key claimed twice). */
    served += e.family < family_count && c->families.slots[e.family].refusal == XPACK_FAMILY_SERVED &&
              xp_view_entry_findable(&c->view, i, XPACK_IDENTITY_MAX_LEN);
  }
  return served;
}

xpack_status xpack_cache_open_best(const char* const* paths, size_t count, unsigned flags, xpack_cache** out,
                                   size_t* chosen, xpack_cache_candidate* candidates, xpack_error* err) {
  return xpack_cache_open_best_limits(paths, count, flags, NULL, out, chosen, candidates, err);
}

/* Where the candidates are: paths, or ranges of open files. */
typedef struct candidates_at {
  const char* const* paths;
  const xpack_cache_range* ranges;
} candidates_at;

static xpack_status open_candidate(const candidates_at* at, size_t i, unsigned flags, const xpack_open_limits* limits,
                                   xpack_cache** out, xpack_error* err) {
  if (at->paths) return xpack_cache_open_limits(at->paths[i], flags, limits, out, err);
  const xpack_cache_range* r = &at->ranges[i];
  return xpack_cache_open_fd(r->fd, r->offset, r->size, r->name, flags, limits, out, err);
}

static xpack_status choose(const candidates_at* at, size_t count, unsigned flags, const xpack_open_limits* limits,
                           xpack_cache** out, size_t* chosen, xpack_cache_candidate* candidates, xpack_error* err);

xpack_status xpack_cache_open_best_limits(const char* const* paths, size_t count, unsigned flags,
                                          const xpack_open_limits* limits, xpack_cache** out, size_t* chosen,
                                          xpack_cache_candidate* candidates, xpack_error* err) {
  if (out != NULL) *out = NULL; /* on every failure, a caller error included */
  if (paths == NULL || out == NULL || chosen == NULL || count == 0) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_cache_open_best: NULL paths, output or chosen, or no path");
  }
  for (size_t i = 0; i < count; i++) {
    if (paths[i] == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_cache_open_best: path %zu is NULL", i);
  }
  const candidates_at at = {paths, NULL};
  return choose(&at, count, flags, limits, out, chosen, candidates, err);
}

xpack_status xpack_cache_open_best_fd(const xpack_cache_range* ranges, size_t count, unsigned flags,
                                      const xpack_open_limits* limits, xpack_cache** out, size_t* chosen,
                                      xpack_cache_candidate* candidates, xpack_error* err) {
  if (out != NULL) *out = NULL; /* on every failure, a caller error included */
  if (ranges == NULL || out == NULL || chosen == NULL || count == 0) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_cache_open_best_fd: NULL ranges, output or chosen, or no range");
  }
  const candidates_at at = {NULL, ranges};
  return choose(&at, count, flags, limits, out, chosen, candidates, err);
}

static xpack_status choose(const candidates_at* at, size_t count, unsigned flags, const xpack_open_limits* limits,
                           xpack_cache** out, size_t* chosen, xpack_cache_candidate* candidates, xpack_error* err) {
  *out = NULL;
  if (candidates) memset(candidates, 0, count * sizeof *candidates);
  xpack_cache* best = NULL;
  size_t best_index = 0;
  uint64_t best_served = 0;
  int best_mine = 0;
  /* One file is no choice: its program's bytes are not hashed (a program without an eh00 header is hashed whole). */
  const void* program = limits && count > 1 ? limits->program : NULL;
  xpack_error first_error = {XPACK_OK, ""};
  for (size_t i = 0; i < count; i++) {
    xpack_cache* c = NULL;
    xpack_error open_error = {XPACK_OK, ""};
    if (candidates) candidates[i].tried = 1;
    if (open_candidate(at, i, flags, limits, &c, &open_error) != XPACK_OK) {
      if (candidates) candidates[i].open_error = open_error;
      if (first_error.status == XPACK_OK) first_error = open_error;
      continue;
    }
    const uint64_t entries = xpack_cache_entry_count(c);
    const uint64_t served = xpack_cache_entries_served(c);
    if (candidates) {
      candidates[i].entries = entries;
      candidates[i].entries_served = served;
      candidates[i].refused_whole = !c->skipped && c->refusal[0] != 0;
    }
    const int whole = c->skipped || (served == entries && served > 0);
    /* A skipped file was not read: whether it is this program's is unknown, and it is kept at once as before. */
    /* Built from this program wins even refused whole here: another program's cache could serve only weights the
     * two share, and this one's refusal ("another XNNPACK build") is what the app needs to hear to re-pack (a
     * review weighed both ways, 2026-11-29). */
    const int mine = program == NULL || c->skipped ||
                     xpack_cache_check_program(c, program, limits->program_size, NULL) == XPACK_OK;
    if (candidates) candidates[i].other_program = !mine;
    if (best == NULL || mine > best_mine || (mine == best_mine && (served > best_served || whole))) {
      xpack_cache_close(best);
      best = c;
      best_index = i;
      best_served = served;
      best_mine = mine;
    } else {
      xpack_cache_close(c);
    }
    if (whole && mine) break;
  }
  if (best == NULL) {
    if (err) *err = first_error;
    return first_error.status;
  }
  *out = best;
  *chosen = best_index;
  return XPACK_OK;
}
