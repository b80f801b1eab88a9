#include "run_misses.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"

/* Without -v, a run names this many misses in all: a cache of another model misses every weight. */
#define MISS_LINES_WITHOUT_VERBOSE 8

typedef struct miss_record {
  xpack_miss_reason reason;
  uint32_t seed;
  char* kernel; /* NUL-terminated copies; NULL as in xpack_miss */
  char* bias;
  uint32_t family;
} miss_record;

struct run_misses {
  xpack_cache* cache;
  const cli_cache_source* source; /* the chosen cache */
  const char* cache_path;
  miss_record* records;
  size_t count, capacity;
  size_t dropped;       /* misses not kept for want of memory */
  size_t lines_printed; /* over the whole run, for the limit */
  size_t lines_left_out;
  /* The hints' view of the file, made on the first miss that needs one: entries sorted by kernel identity. */
  int hints_tried;
  xpack_file* file;
  uint64_t* by_kernel;
  uint64_t entry_count;
};

static char* copy_identity(const char* s, size_t n) {
  if (s == NULL) return NULL;
  char* c = malloc(n + 1);
  if (c == NULL) return NULL;
  memcpy(c, s, n);
  c[n] = 0;
  return c;
}

static void on_miss(void* context, const xpack_miss* miss) {
  run_misses* m = context;
  if (m->count == m->capacity) {
    const size_t capacity = m->capacity ? 2 * m->capacity : 16;
    miss_record* grown = realloc(m->records, capacity * sizeof *grown);
    if (grown == NULL) {
      m->dropped++;
      return;
    }
    m->records = grown;
    m->capacity = capacity;
  }
  miss_record r = {miss->reason, miss->seed, copy_identity(miss->kernel, miss->kernel_len),
                   copy_identity(miss->bias, miss->bias_len), miss->family};
  if ((miss->kernel && r.kernel == NULL) || (miss->bias && r.bias == NULL)) {
    free(r.kernel);
    free(r.bias);
    m->dropped++;
    return;
  }
  m->records[m->count++] = r;
}

run_misses* run_misses_start(xpack_cache* cache, const cli_cache_source* source) {
  if (cache == NULL) return NULL;
  run_misses* m = calloc(1, sizeof *m);
  if (m == NULL) return NULL;
  m->cache = cache;
  m->source = source;
  m->cache_path = source ? source->arg : NULL;
  xpack_cache_on_miss(cache, on_miss, m);
  return m;
}

void run_misses_clear(run_misses* m) {
  if (m == NULL) return;
  for (size_t i = 0; i < m->count; i++) {
    free(m->records[i].kernel);
    free(m->records[i].bias);
  }
  m->count = 0;
  m->dropped = 0;
}

static const xpack_file* sort_file; /* qsort has no context argument */
static int by_kernel_order(const void* a, const void* b) {
  xpack_file_entry ea, eb;
  xpack_file_get_entry(sort_file, *(const uint64_t*)a, &ea);
  xpack_file_get_entry(sort_file, *(const uint64_t*)b, &eb);
  return strcmp(ea.kernel, eb.kernel);
}

static int load_hints(run_misses* m) {
  if (m->hints_tried) return m->by_kernel != NULL;
  m->hints_tried = 1;
  xpack_error err;
  if (cli_cache_source_open_file(m->source, &m->file, &err) != XPACK_OK) return 0;
  xpack_file_info info;
  xpack_file_get_info(m->file, &info);
  m->entry_count = info.entry_count;
  m->by_kernel = malloc((info.entry_count ? info.entry_count : 1) * sizeof *m->by_kernel);
  if (m->by_kernel == NULL) return 0;
  for (uint64_t i = 0; i < info.entry_count; i++) m->by_kernel[i] = i;
  sort_file = m->file;
  qsort(m->by_kernel, (size_t)info.entry_count, sizeof *m->by_kernel, by_kernel_order);
  return 1;
}

/* What the cache holds of a weight it has no entry for: the same weight under other seeds, or the same
 * kernel with another bias. */
static void not_found_why(run_misses* m, const miss_record* r, char* why, size_t size) {
  static const char kNone[] = "not found: the cache holds no entry for this weight (packed from another program, "
                              "or the weight changed)";
  if (!load_hints(m)) {
    snprintf(why, size, "not found: the cache holds no entry with this key");
    return;
  }
  uint64_t lo = 0, hi = m->entry_count;
  while (lo < hi) { /* the first entry whose kernel is not below r->kernel */
    const uint64_t mid = lo + (hi - lo) / 2;
    xpack_file_entry e;
    xpack_file_get_entry(m->file, m->by_kernel[mid], &e);
    if (strcmp(e.kernel, r->kernel) < 0) lo = mid + 1;
    else hi = mid;
  }
  char seeds[64] = "";
  size_t seeds_len = 0, same_bias = 0, other_bias = 0;
  const char* another_bias = NULL;
  uint32_t held_by = UINT32_MAX; /* the family of the first entry holding this weight under another seed */
  int same_key = 0;              /* an entry has this very key, yet the look-up did not find it */
  for (uint64_t i = lo; i < m->entry_count; i++) {
    xpack_file_entry e;
    xpack_file_get_entry(m->file, m->by_kernel[i], &e);
    if (strcmp(e.kernel, r->kernel) != 0) break;
    const int bias_alike = (e.bias == NULL && r->bias == NULL) || (e.bias && r->bias && strcmp(e.bias, r->bias) == 0);
    if (!bias_alike) {
      other_bias++;
      if (another_bias == NULL) another_bias = e.bias ? e.bias : "(none)";
      continue;
    }
    if (e.seed == r->seed) same_key = 1;
    if (held_by == UINT32_MAX) held_by = e.family;
    if (same_bias++ < 3 && seeds_len + 12 < sizeof seeds) {
      seeds_len += (size_t)snprintf(seeds + seeds_len, sizeof seeds - seeds_len, "%s0x%08" PRIx32,
                                    seeds_len ? ", " : "", e.seed);
    }
  }
  /* Tile sizes are part of XNNPACK's seed: a CPU whose kernels pack a family otherwise keys its weights
   * otherwise too, so its look-ups find nothing rather than reach the family's refusal. */
  xpack_cache_family_info family;
  if (same_key) {
    snprintf(why, size, "not found: the cache has an entry with this very key that look-ups cannot reach (its key "
             "hash or its place in the order is wrong: `xpack verify %s` names it)", m->cache_path);
  } else if (same_bias > 0 && held_by < xpack_cache_family_count(m->cache) &&
      xpack_cache_family(m->cache, held_by, &family, NULL) == XPACK_OK && family.refusal != XPACK_FAMILY_SERVED) {
    snprintf(why, size,
             "not found: the cache holds this weight under seed %s%s, not 0x%08" PRIx32 ", in its packing family "
             "%s, which this machine refuses: %s",
             seeds, same_bias > 3 ? ", ..." : "", r->seed, family.name,
             family.reason ? family.reason : xpack_family_refusal_name(family.refusal));
  } else if (same_bias > 0) {
    snprintf(why, size,
             "not found: the cache holds this weight under seed %s%s, not 0x%08" PRIx32 ": XNNPACK keys it "
             "differently here (another operator or parameters, or another XNNPACK)",
             seeds, same_bias > 3 ? ", ..." : "", r->seed);
  } else if (other_bias > 0) {
    snprintf(why, size, "not found: the cache holds this kernel with another bias (%.80s%s)", another_bias,
             strlen(another_bias) > 80 ? "..." : "");
  } else {
    snprintf(why, size, "%s", kNone);
  }
}

static void why_of(run_misses* m, const miss_record* r, char* why, size_t size) {
  xpack_cache_family_info family;
  switch (r->reason) {
    case XPACK_MISS_UNBOUND:
      snprintf(why, size, "unbound: the raw weight was never bound to an identity, so it cannot be looked up");
      return;
    case XPACK_MISS_NOT_FOUND: not_found_why(m, r, why, size); return;
    case XPACK_MISS_INCOMPATIBLE: {
      const char* refusal = xpack_cache_refusal(m->cache);
      snprintf(why, size, "the whole file is refused: %s", refusal ? refusal : "(no reason recorded)");
      return;
    }
    case XPACK_MISS_CORRUPT:
      snprintf(why, size,
               "refused: the entry fails the loader's checks (its check value or region, flags it does not know, "
               "a string, or its key claimed twice); `xpack verify %s` names which", m->cache_path);
      return;
    case XPACK_MISS_NO_FAMILY:
      snprintf(why, size, "refused: the entry names no packing family (a format 1.0 cache: pack it again)");
      return;
    case XPACK_MISS_PROBE:
      if (xpack_cache_family(m->cache, r->family, &family, NULL) == XPACK_OK) {
        snprintf(why, size, "refused: its packing family %s is refused on this machine: %s", family.name,
                 family.reason ? family.reason : xpack_family_refusal_name(family.refusal));
      } else {
        snprintf(why, size, "refused: its packing family is refused on this machine");
      }
      return;
    case XPACK_MISS_SIZE:
      snprintf(why, size, "refused: the entry's region is not the size XNNPACK reads for the weight");
      return;
    case XPACK_MISS_UNSIZED:
      snprintf(why, size, "refused: XNNPACK could not size the weight when its node was defined alone");
      return;
    case XPACK_MISS_MISMATCH:
      snprintf(why, size, "refused: XNNPACK packed other bytes than the entry's here (another CPU kernel choice?)");
      return;
  }
  snprintf(why, size, "%s", xpack_miss_reason_name(r->reason));
}

void run_misses_print(run_misses* m, FILE* out, int limit_lines) {
  if (m == NULL) return;
  for (size_t i = 0; i < m->count; i++) {
    if (limit_lines && m->lines_printed >= MISS_LINES_WITHOUT_VERBOSE) {
      m->lines_left_out += m->count - i;
      break;
    }
    const miss_record* r = &m->records[i];
    char why[512];
    why_of(m, r, why, sizeof why);
    if (r->kernel == NULL) {
      cli_line(out, "  missed: seed 0x%08" PRIx32 ": %s", r->seed, why);
    } else {
      cli_line(out, "  missed: kernel %s, bias %s, seed 0x%08" PRIx32 ": %s", r->kernel, r->bias ? r->bias : "(none)",
               r->seed, why);
    }
    m->lines_printed++;
  }
  if (m->dropped) cli_line(out, "  (%zu more missed look-ups not recorded: out of memory)", m->dropped);
}

void run_misses_json(run_misses* m, json* j) {
  if (m == NULL) return;
  json_key(j, "missed");
  json_array(j);
  for (size_t i = 0; i < m->count; i++) {
    const miss_record* r = &m->records[i];
    char why[512];
    why_of(m, r, why, sizeof why);
    xpack_cache_family_info family;
    const int has_family = r->family != UINT32_MAX && xpack_cache_family(m->cache, r->family, &family, NULL) == XPACK_OK;
    json_object(j);
    json_key(j, "reason"); json_string(j, xpack_miss_reason_name(r->reason));
    json_key(j, "seed"); json_uint(j, r->seed);
    json_key(j, "kernel"); json_string(j, r->kernel);
    json_key(j, "bias"); json_string(j, r->bias);
    json_key(j, "family"); json_string(j, has_family ? family.name : NULL);
    json_key(j, "why"); json_string(j, why);
    json_end_object(j);
  }
  json_end_array(j);
}

void run_misses_print_left_out(run_misses* m, FILE* out) {
  if (m == NULL || m->lines_left_out == 0) return;
  cli_line(out, "%zu more missed look-up%s not named here: `xpack -v run ... --cache %s` names every one",
           m->lines_left_out, m->lines_left_out == 1 ? "" : "s", m->cache_path);
}

void run_misses_finish(run_misses* m) {
  if (m == NULL) return;
  xpack_cache_on_miss(m->cache, NULL, NULL);
  run_misses_clear(m);
  free(m->records);
  free(m->by_kernel);
  xpack_file_close(m->file);
  free(m);
}
