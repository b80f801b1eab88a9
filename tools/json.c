#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void json_init(json* j, FILE* out) {
  j->out = out;
  j->depth = 0;
  j->count[0] = 0;
  j->after_key = 0;
}

static void before_value(json* j) {
  if (j->after_key) {
    j->after_key = 0;
    return;
  }
  if (j->count[j->depth]++ > 0) fputc(',', j->out);
}

static void open_container(json* j, char c) {
  before_value(j);
  fputc(c, j->out);
  if (j->depth + 1 < JSON_MAX_DEPTH) j->depth++;
  j->count[j->depth] = 0;
}

static void close_container(json* j, char c) {
  fputc(c, j->out);
  if (j->depth > 0) j->depth--;
}

void json_object(json* j) { open_container(j, '{'); }
void json_end_object(json* j) { close_container(j, '}'); }
void json_array(json* j) { open_container(j, '['); }
void json_end_array(json* j) { close_container(j, ']'); }

static void write_escaped(FILE* out, const char* s, size_t n) {
  fputc('"', out);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      fputc('\\', out);
      fputc(c, out);
    } else if (c < 0x20 || c == 0x7f) {
      fprintf(out, "\\u%04x", c);
    } else {
      fputc(c, out);
    }
  }
  fputc('"', out);
}

void json_key(json* j, const char* key) {
  before_value(j);
  write_escaped(j->out, key, strlen(key));
  fputc(':', j->out);
  j->after_key = 1;
}

void json_string_n(json* j, const char* s, size_t n) {
  before_value(j);
  write_escaped(j->out, s, n);
}

void json_string(json* j, const char* s) {
  if (s == NULL) {
    json_null(j);
    return;
  }
  json_string_n(j, s, strlen(s));
}

void json_uint(json* j, uint64_t v) {
  before_value(j);
  fprintf(j->out, "%" PRIu64, v);
}

void json_int(json* j, int64_t v) {
  before_value(j);
  fprintf(j->out, "%" PRId64, v);
}

void json_double(json* j, double v) {
  before_value(j);
  if (isfinite(v)) fprintf(j->out, "%.6g", v);
  else fputs("null", j->out);
}

void json_bool(json* j, int v) {
  before_value(j);
  fputs(v ? "true" : "false", j->out);
}

void json_null(json* j) {
  before_value(j);
  fputs("null", j->out);
}

void json_hex64(json* j, uint64_t v) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016" PRIx64, v);
  json_string_n(j, buf, 16);
}

void json_finish(json* j) { fputc('\n', j->out); }
