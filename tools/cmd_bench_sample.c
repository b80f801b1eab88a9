/* xpack bench: the variants, and reading a child's sample (one flat JSON object of numbers and strings). */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_bench.h"
#include "timing.h"
#include "xpack.h"

const char* const kBenchVariantNames[BENCH_VARIANT_COUNT] = {
    "nocache", "cache_warm", "cache_cold", "nocache_cold", "ideal", "cache_cold_seq", "cache_cold_willneed"};

int bench_variant_of(const char* name) {
  for (int v = 0; v < BENCH_VARIANT_COUNT; v++) {
    if (strcmp(name, kBenchVariantNames[v]) == 0) return v;
  }
  return -1;
}

int bench_variant_is_cold(bench_variant v) {
  return v == BENCH_CACHE_COLD || v == BENCH_NOCACHE_COLD || v == BENCH_CACHE_COLD_SEQ ||
         v == BENCH_CACHE_COLD_WILLNEED;
}

int bench_variant_uses_cache(bench_variant v) {
  return v == BENCH_CACHE_WARM || v == BENCH_CACHE_COLD || v == BENCH_CACHE_COLD_SEQ || v == BENCH_CACHE_COLD_WILLNEED;
}

#define AS_UNLIKE_APP_OPTION(bit, option, json_name, text_note) {bit, option, json_name, text_note},
const bench_unlike_app_option kBenchUnlikeApp[] = {BENCH_UNLIKE_APP_LIST(AS_UNLIKE_APP_OPTION)};
#undef AS_UNLIKE_APP_OPTION
_Static_assert(sizeof kBenchUnlikeApp / sizeof kBenchUnlikeApp[0] == BENCH_UNLIKE_APP_OPTIONS,
               "BENCH_UNLIKE_APP_OPTIONS counts BENCH_UNLIKE_APP_LIST");

unsigned bench_unlike_app_bit(const char* arg) {
  for (int i = 0; i < BENCH_UNLIKE_APP_OPTIONS; i++) {
    if (strcmp(arg, kBenchUnlikeApp[i].option) == 0) return kBenchUnlikeApp[i].bit;
  }
  return 0;
}

/* Every cache variant opens the cache as an app following docs/INTEGRATION.md does: it probes its families
 * early (the probes overlap the replay instead of adding to runtime creation), skips a small file unread and,
 * in the cold variants, a file under 1 MiB. */
unsigned bench_variant_open_flags(bench_variant v, unsigned unlike_app) {
  const unsigned app = ((unlike_app & BENCH_PROBE_LATE) ? 0u : XPACK_OPEN_PROBE_EARLY) |
                       ((unlike_app & BENCH_SERVE_SMALL) ? 0u : XPACK_OPEN_SKIP_SMALL) |
                       ((unlike_app & BENCH_SERVE_COLD) ? 0u : XPACK_OPEN_SKIP_COLD);
  if (v == BENCH_CACHE_COLD_SEQ) return app | XPACK_OPEN_SEQUENTIAL;
  if (v == BENCH_CACHE_COLD_WILLNEED) return app | XPACK_OPEN_WILLNEED;
  return app;
}

typedef enum field_kind { FIELD_DOUBLE, FIELD_UINT, FIELD_STRING } field_kind;
typedef struct field {
  const char* name;
  field_kind kind;
  size_t offset;
} field;

#define F(name, kind) {#name, kind, offsetof(bench_sample, name)}
static const field kFields[] = {
    F(open_ms, FIELD_DOUBLE), F(prefetch_ms, FIELD_DOUBLE), F(load_ms, FIELD_DOUBLE), F(size_ms, FIELD_DOUBLE), F(create_ms, FIELD_DOUBLE),
    F(first_inference_ms, FIELD_DOUBLE), F(ttfi_ms, FIELD_DOUBLE), F(fill_ms, FIELD_DOUBLE), F(load_ttfi_ms, FIELD_DOUBLE),
    F(rss_bytes, FIELD_UINT), F(private_dirty_bytes, FIELD_UINT), F(peak_rss_bytes, FIELD_UINT),
    F(major_faults, FIELD_UINT), F(minor_faults, FIELD_UINT), F(delegates, FIELD_UINT), F(failed, FIELD_UINT),
    F(lookups, FIELD_UINT), F(hits, FIELD_UINT), F(misses, FIELD_UINT), F(heap_fallback_bytes, FIELD_UINT),
    F(open_major_faults, FIELD_UINT), F(open_read_calls, FIELD_UINT), F(open_storage_bytes, FIELD_UINT),
    F(model_resident_bytes, FIELD_UINT), F(open_flags, FIELD_UINT),
    F(output_xxh3, FIELD_STRING), F(error, FIELD_STRING), F(cache_refused, FIELD_STRING),
};
#undef F
enum { FIELD_COUNT = sizeof kFields / sizeof kFields[0] };

static const char* skip_space(const char* p) {
  while (isspace((unsigned char)*p)) p++;
  return p;
}

/* A JSON string starting at p (after the quote); returns a malloc'd copy, *end after the closing quote.
 * Escapes other than \" and \\ and \uXXXX (kept as '?') do not occur in what children write. */
static char* read_string(const char* p, const char** end) {
  size_t n = 0;
  char* s = malloc(strlen(p) + 1);
  if (s == NULL) return NULL;
  while (*p && *p != '"') {
    if (*p == '\\' && p[1]) {
      p++;
      if (*p == 'u') {
        s[n++] = '?';
        for (int k = 0; k < 4 && p[1]; k++) p++;
        p++;
        continue;
      }
    }
    s[n++] = *p++;
  }
  if (*p != '"') {
    free(s);
    return NULL;
  }
  s[n] = 0;
  *end = p + 1;
  return s;
}

int bench_sample_parse(const char* text, bench_sample* out, char* why, size_t why_size) {
  memset(out, 0, sizeof *out);
  int seen[FIELD_COUNT] = {0};
  const char* p = skip_space(text ? text : "");
  if (*p++ != '{') {
    snprintf(why, why_size, "the child wrote no JSON object");
    goto bad;
  }
  for (;;) {
    p = skip_space(p);
    if (*p == '}') break;
    if (*p++ != '"') {
      snprintf(why, why_size, "expected a key at offset %td", p - 1 - text);
      goto bad;
    }
    char* key = read_string(p, &p);
    if (key == NULL) {
      snprintf(why, why_size, "unterminated key");
      goto bad;
    }
    p = skip_space(p);
    if (*p++ != ':') {
      snprintf(why, why_size, "expected ':' after \"%s\"", key);
      free(key);
      goto bad;
    }
    p = skip_space(p);
    int f = -1;
    for (int i = 0; i < FIELD_COUNT; i++) {
      if (strcmp(kFields[i].name, key) == 0) f = i;
    }
    free(key);
    char* slot = f >= 0 ? (char*)out + kFields[f].offset : NULL;
    if (*p == '"') {
      char* value = read_string(p + 1, &p);
      if (value == NULL) {
        snprintf(why, why_size, "unterminated string");
        goto bad;
      }
      if (f >= 0 && kFields[f].kind == FIELD_STRING) {
        memcpy(slot, &value, sizeof value);
        seen[f] = 1;
      } else {
        free(value);
      }
    } else if (strncmp(p, "null", 4) == 0) {
      p += 4;
      if (f >= 0 && kFields[f].kind == FIELD_STRING) seen[f] = 1;
    } else {
      char* end;
      double v = strtod(p, &end);
      if (end == p) {
        snprintf(why, why_size, "bad value at offset %td", p - text);
        goto bad;
      }
      if (f >= 0 && kFields[f].kind == FIELD_DOUBLE) memcpy(slot, &v, sizeof v);
      if (f >= 0 && kFields[f].kind == FIELD_UINT) {
        uint64_t u = strtoull(p, NULL, 10);
        memcpy(slot, &u, sizeof u);
      }
      if (f >= 0) seen[f] = 1;
      p = end;
    }
    p = skip_space(p);
    if (*p == ',') p++;
  }
  for (int i = 0; i < FIELD_COUNT; i++) {
    if (!seen[i]) {
      snprintf(why, why_size, "the child's JSON has no \"%s\"", kFields[i].name);
      goto bad;
    }
  }
  return 0;
bad:
  bench_sample_free(out);
  return -1;
}

void bench_sample_free(bench_sample* s) {
  free(s->output_xxh3);
  free(s->error);
  free(s->cache_refused);
  s->output_xxh3 = s->error = s->cache_refused = NULL;
}

void bench_sample_median(const bench_sample* samples, size_t n, bench_sample* out) {
  memset(out, 0, sizeof *out);
  if (n == 0) return;
  double* values = malloc(n * sizeof *values);
  if (values == NULL) return;
  for (int f = 0; f < FIELD_COUNT; f++) {
    if (kFields[f].kind == FIELD_STRING) continue;
    for (size_t i = 0; i < n; i++) {
      const char* slot = (const char*)&samples[i] + kFields[f].offset;
      if (kFields[f].kind == FIELD_DOUBLE) {
        memcpy(&values[i], slot, sizeof(double));
      } else {
        uint64_t u;
        memcpy(&u, slot, sizeof u);
        values[i] = (double)u;
      }
    }
    const double m = bench_median(values, (int)n);
    char* slot = (char*)out + kFields[f].offset;
    if (kFields[f].kind == FIELD_DOUBLE) {
      memcpy(slot, &m, sizeof m);
    } else {
      uint64_t u = (uint64_t)(m + 0.5);
      memcpy(slot, &u, sizeof u);
    }
  }
  free(values);
}
