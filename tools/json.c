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

/* The length of the well-formed UTF-8 sequence at s[0, n) (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF), or 0 when s does not start with one. */
static size_t utf8_sequence(const unsigned char* s, size_t n) {
  unsigned char c = s[0];
  size_t len;
  unsigned char lo = 0x80, hi = 0xbf; /* the allowed range of the second byte */
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) len = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (n < len || s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; i++) {
    if (s[i] < 0x80 || s[i] > 0xbf) return 0;
  }
  return len;
}

/* Names come from files and the command line and need not be UTF-8; a JSON document must be. Each byte
 * that does not belong to a well-formed sequence is written as U+FFFD, so the output always parses. */
static void write_escaped(FILE* out, const char* s, size_t n) {
  const unsigned char* u = (const unsigned char*)s;
  fputc('"', out);
  for (size_t i = 0; i < n;) {
    unsigned char c = u[i];
    size_t len = utf8_sequence(u + i, n - i);
    if (len == 0) {
      fputs("\\ufffd", out);
      i++;
    } else if (len == 2 && c == 0xc2 && u[i + 1] <= 0x9f) { /* C1 controls: escaped like C0 (cli_out_end) */
      fprintf(out, "\\u%04x", u[i + 1]);
      i += len;
    } else if (len > 1) {
      fwrite(u + i, 1, len, out);
      i += len;
    } else {
      if (c == '"' || c == '\\') {
        fputc('\\', out);
        fputc(c, out);
      } else if (c < 0x20 || c == 0x7f) {
        fprintf(out, "\\u%04x", c);
      } else {
        fputc(c, out);
      }
      i++;
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
